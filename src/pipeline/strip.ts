/**
 * Removes what the AG-UI schema does not describe, without judging what it does describe
 * (the same contract as @ag-ui/client's `stripUnknown`, driven by the bundled JSON Schema
 * instead of zod):
 *
 * - an unknown property on a closed object (`unevaluatedProperties: false`) is removed;
 * - an unrecognised member of a discriminated union (a `oneOf` whose members all pin one
 *   property to a `const`: events by `type`, messages by `role`, parts by `type`, patch
 *   operations by `op`, outcomes by `type`) is removed — the array element, or the key when
 *   the position is optional; in a required position the containing object goes instead;
 * - nothing else: a malformed value on a described field stays for the validator to reject,
 *   fatally. Open positions (metadata, state, activity content, patch operations, rawEvent)
 *   pass through untouched.
 *
 * The plan is compiled once from the schema; stripping copies only the objects on the path
 * to something removed, so a frozen input is never touched.
 */

export type PlanNode =
  | { kind: "any" }
  | { kind: "object"; props: Map<string, PropPlan>; closed: boolean }
  | { kind: "array"; items: PlanNode }
  | { kind: "tagged"; key: string; options: Map<unknown, PlanNode> }
  | { kind: "structural"; array: PlanNode | undefined; object: PlanNode | undefined };

export interface PropPlan {
  node: PlanNode;
  required: boolean;
  /** The `const` the schema pins this property to, if any (used to find discriminators). */
  constValue?: unknown;
  hasConst: boolean;
}

type Schema = Record<string, unknown>;

const ANY: PlanNode = { kind: "any" };

/** Compiles strip plans for the `$defs` of one JSON Schema document. */
export class StripPlanner {
  private readonly defs: Record<string, Schema>;
  private readonly byDef = new Map<string, PlanNode>();

  constructor(document: Schema) {
    this.defs = (document.$defs ?? {}) as Record<string, Schema>;
  }

  /** The plan for `#/$defs/<name>`. */
  def(name: string): PlanNode {
    const cached = this.byDef.get(name);
    if (cached) return cached;
    const schema = this.defs[name];
    if (!schema) throw new Error(`strip plan: no $defs/${name} in the schema`);
    // Placeholder first, filled in place, so a recursive reference resolves to the same node.
    const node = { kind: "any" } as PlanNode;
    this.byDef.set(name, node);
    Object.assign(node, this.compile(schema));
    return node;
  }

  private resolve(schema: Schema): Schema {
    const ref = schema.$ref;
    if (typeof ref === "string" && ref.startsWith("#/$defs/")) {
      const target = this.defs[ref.slice("#/$defs/".length)];
      if (target) return target;
    }
    return schema;
  }

  private compile(schema: Schema): PlanNode {
    const ref = schema.$ref;
    if (typeof ref === "string" && ref.startsWith("#/$defs/")) {
      return this.def(ref.slice("#/$defs/".length));
    }
    const union = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
    if (Array.isArray(union)) return this.compileUnion(union);
    if (schema.type === "object" || schema.properties !== undefined || schema.allOf !== undefined) {
      return this.compileObject(schema);
    }
    if (schema.type === "array" && schema.items && typeof schema.items === "object") {
      const items = this.compile(schema.items as Schema);
      return items.kind === "any" ? ANY : { kind: "array", items };
    }
    return ANY;
  }

  private compileObject(schema: Schema): PlanNode {
    const props = new Map<string, PropPlan>();
    const required = new Set<string>();
    const collect = (part: Schema, depth: number): void => {
      if (depth > 8) return;
      const resolved = this.resolve(part);
      for (const name of (resolved.required as string[] | undefined) ?? []) required.add(name);
      const own = (resolved.properties ?? {}) as Record<string, Schema>;
      for (const [name, sub] of Object.entries(own)) {
        // The most derived definition wins: the composing schema is collected first.
        if (props.has(name)) continue;
        const hasConst = Object.hasOwn(sub, "const");
        props.set(name, {
          node: this.compile(sub),
          required: false,
          hasConst,
          constValue: hasConst ? sub.const : undefined,
        });
      }
      for (const sub of (resolved.allOf as Schema[] | undefined) ?? []) collect(sub, depth + 1);
    };
    collect(schema, 0);
    for (const [name, plan] of props) plan.required = required.has(name);
    const closed = schema.unevaluatedProperties === false || schema.additionalProperties === false;
    if (!closed && props.size === 0) return ANY;
    return { kind: "object", props, closed };
  }

  private compileUnion(options: Schema[]): PlanNode {
    const compiled = options.map((option) => this.compile(option));
    const objects = compiled.filter(
      (node): node is Extract<PlanNode, { kind: "object" }> => node.kind === "object",
    );
    if (objects.length === compiled.length && objects.length > 1) {
      const first = objects[0]!;
      for (const [key, plan] of first.props) {
        if (!plan.hasConst) continue;
        if (!objects.every((o) => o.props.get(key)?.hasConst === true)) continue;
        const byTag = new Map<unknown, PlanNode>();
        for (const o of objects) byTag.set(o.props.get(key)!.constValue, o);
        if (byTag.size === objects.length) return { kind: "tagged", key, options: byTag };
      }
    }
    const arrays = compiled.filter((node) => node.kind === "array");
    // Two untagged object members: only the validator can choose between them.
    const object = objects.length === 1 ? objects[0] : undefined;
    const array = arrays.length === 1 ? arrays[0] : undefined;
    if (!object && !array) return ANY;
    return { kind: "structural", array, object };
  }
}

/** Returned while unwinding when a value is an unrecognised union member. */
export const DROP: unique symbol = Symbol("agui.strip.drop");

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const pointerToken = (key: string | number): string =>
  typeof key === "number" ? String(key) : key.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * Strips `value` against `node`. Returns the value itself when nothing was removed, a copy
 * when something was, or {@link DROP} when the whole value is unrecognisable. Every removal
 * is appended to `removed` as a JSON pointer relative to the stripped root.
 */
export function stripAgainst(
  value: unknown,
  node: PlanNode,
  path: string,
  removed: string[],
): unknown {
  switch (node.kind) {
    case "any":
      return value;
    case "tagged": {
      if (!isPlainObject(value)) return value; // malformed: the validator's to reject
      const option = node.options.get(value[node.key]);
      return option === undefined ? DROP : stripAgainst(value, option, path, removed);
    }
    case "structural": {
      if (Array.isArray(value))
        return node.array ? stripAgainst(value, node.array, path, removed) : value;
      if (isPlainObject(value) && node.object)
        return stripAgainst(value, node.object, path, removed);
      return value;
    }
    case "array": {
      if (!Array.isArray(value)) return value;
      let out: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const mark = removed.length;
        const entry = value[i];
        const child = stripAgainst(entry, node.items, `${path}/${i}`, removed);
        if (child === DROP) {
          removed.length = mark;
          removed.push(`${path}/${i}`);
          out ??= value.slice(0, i);
          continue;
        }
        if (child !== entry && !out) out = value.slice(0, i);
        out?.push(child);
      }
      return out ?? value;
    }
    case "object": {
      if (!isPlainObject(value)) return value;
      let out: Record<string, unknown> | undefined;
      const keys = Object.keys(value);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const entry = value[key];
        const prop = node.props.get(key);
        const childPath = `${path}/${pointerToken(key)}`;
        let child: unknown = entry;
        if (prop === undefined) {
          if (!node.closed) {
            if (out) out[key] = entry;
            continue;
          }
          removed.push(childPath);
          child = DROP;
        } else {
          const mark = removed.length;
          child = stripAgainst(entry, prop.node, childPath, removed);
          if (child === DROP) {
            removed.length = mark;
            if (prop.required) return DROP;
            removed.push(childPath);
          }
        }
        if (child === entry) {
          if (out) out[key] = entry;
          continue;
        }
        if (!out) {
          out = {};
          for (let j = 0; j < i; j++) out[keys[j]!] = value[keys[j]!];
        }
        if (child !== DROP) out[key] = child;
      }
      return out ?? value;
    }
  }
}

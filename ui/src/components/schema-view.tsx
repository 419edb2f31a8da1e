import { useState } from "preact/hooks";
import type { JsonSchema } from "../lib/types";
import { JsonView } from "./json-view";

/**
 * A JSON Schema as a readable tree: each property with its type, whether it is required, its
 * description and constraints; nested objects and array items indented. A toggle shows the
 * raw schema.
 */
export function SchemaView({ schema }: { schema: JsonSchema | undefined }) {
  const [raw, setRaw] = useState(false);
  if (!schema) return <div class="muted">not declared</div>;
  return (
    <div class="schema">
      <div class="schema-tools">
        <span class="muted">{describeType(schema)}</span>
        <button type="button" class="link" onClick={() => setRaw(!raw)}>
          {raw ? "tree" : "raw JSON"}
        </button>
      </div>
      {raw ? <JsonView value={schema} open={3} /> : <SchemaBody schema={schema} depth={0} />}
    </div>
  );
}

function SchemaBody({ schema, depth }: { schema: JsonSchema; depth: number }) {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const names = Object.keys(properties);
  const extra = schema.additionalProperties;
  const items = schema.items as JsonSchema | undefined;
  const variants = (["anyOf", "oneOf", "allOf"] as const).filter((k) => Array.isArray(schema[k]));
  return (
    <div class="schema-body">
      {typeof schema.description === "string" && depth === 0 && (
        <p class="schema-desc">{schema.description}</p>
      )}
      {names.length > 0 && (
        <ul class="schema-props">
          {names.map((name) => (
            <SchemaProperty
              key={name}
              name={name}
              schema={properties[name]!}
              required={required.has(name)}
              depth={depth}
            />
          ))}
        </ul>
      )}
      {names.length === 0 && schema.type === "object" && (
        <div class="muted small">any keys{extra === false ? " (none allowed)" : ""}</div>
      )}
      {names.length > 0 && extra !== false && schema.type === "object" && (
        <div class="muted small">other keys allowed</div>
      )}
      {items && depth < 6 && (
        <div class="schema-items">
          <span class="muted small">each item: {describeType(items)}</span>
          {hasChildren(items) && <SchemaBody schema={items} depth={depth + 1} />}
        </div>
      )}
      {variants.map((kind) => (
        <div key={kind} class="schema-variants">
          <span class="muted small">{VARIANT_LABEL[kind]}</span>
          <ul class="schema-props">
            {(schema[kind] as JsonSchema[]).map((variant, i) => (
              <li key={i} class="schema-prop">
                <span class="schema-type">{describeType(variant)}</span>
                {hasChildren(variant) && depth < 6 && (
                  <SchemaBody schema={variant} depth={depth + 1} />
                )}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </div>
  );
}

const VARIANT_LABEL = { anyOf: "any of", oneOf: "one of", allOf: "all of" } as const;

function SchemaProperty(props: {
  name: string;
  schema: JsonSchema;
  required: boolean;
  depth: number;
}) {
  const { name, schema, required, depth } = props;
  const constraints = constraintsOf(schema);
  return (
    <li class="schema-prop">
      <div class="schema-line">
        <code class="schema-name">{name}</code>
        <span class="schema-type">{describeType(schema)}</span>
        {required && <span class="tag required">required</span>}
        {constraints.map((c) => (
          <span key={c} class="tag">
            {c}
          </span>
        ))}
      </div>
      {typeof schema.description === "string" && (
        <div class="schema-desc small">{schema.description}</div>
      )}
      {hasChildren(schema) && depth < 6 && <SchemaBody schema={schema} depth={depth + 1} />}
    </li>
  );
}

function hasChildren(schema: JsonSchema): boolean {
  return Boolean(
    (schema.properties && Object.keys(schema.properties).length > 0) ||
      (schema.items && hasChildren(schema.items as JsonSchema)) ||
      schema.anyOf ||
      schema.oneOf ||
      schema.allOf,
  );
}

export function describeType(schema: JsonSchema): string {
  if (typeof schema.$ref === "string") return `→ ${schema.$ref}`;
  if ("const" in schema) return `= ${JSON.stringify(schema.const)}`;
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  const type = schema.type;
  if (Array.isArray(type)) return type.join(" | ");
  if (type === "array") {
    const items = schema.items as JsonSchema | undefined;
    return items ? `array of ${describeType(items)}` : "array";
  }
  if (typeof type === "string")
    return typeof schema.format === "string" ? `${type} (${schema.format})` : type;
  if (schema.anyOf || schema.oneOf) return "one of several";
  return "any";
}

function constraintsOf(schema: JsonSchema): string[] {
  const out: string[] = [];
  if ("default" in schema) out.push(`default ${JSON.stringify(schema.default)}`);
  for (const [key, label] of [
    ["minimum", "≥"],
    ["maximum", "≤"],
    ["exclusiveMinimum", ">"],
    ["exclusiveMaximum", "<"],
    ["minLength", "min length"],
    ["maxLength", "max length"],
    ["minItems", "min items"],
    ["maxItems", "max items"],
    ["pattern", "pattern"],
  ] as const) {
    if (schema[key] !== undefined) out.push(`${label} ${schema[key]}`);
  }
  return out;
}

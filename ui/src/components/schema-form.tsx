import { useEffect, useState } from "preact/hooks";
import { pretty } from "../lib/format";
import type { JsonSchema } from "../lib/types";

type Value = unknown;

interface FieldProps {
  schema: JsonSchema;
  value: Value;
  onChange(value: Value): void;
  /** For labels and test ids: the property path, e.g. `approval.comment`. */
  path: string;
}

/**
 * A form generated from a JSON Schema: an object's properties become fields (text, number,
 * checkbox, choice), anything the form cannot express well (arrays, open objects, unions) a
 * JSON box. `onChange` gets the whole value each time.
 */
export function SchemaForm(props: FieldProps) {
  return <Field {...props} />;
}

/**
 * A value to start the form with: defaults, objects with their fields. A yes-or-no without a
 * default starts unanswered: answering an approval is the user's choice, not the form's.
 */
export function initialValue(schema: JsonSchema | undefined): Value {
  if (!schema) return {};
  if ("default" in schema) return structuredClone(schema.default);
  if ("const" in schema) return schema.const;
  if (schema.type === "object" || schema.properties) {
    const out: Record<string, Value> = {};
    for (const [name, child] of Object.entries(
      (schema.properties ?? {}) as Record<string, JsonSchema>,
    )) {
      const start = initialValue(child);
      if (start !== undefined && ("default" in child || child.type === "object")) {
        out[name] = start;
      }
    }
    return out;
  }
  return undefined;
}

/**
 * The required fields `value` leaves out, by path (`approval.approved`): the form cannot be
 * sent until they are given.
 */
export function missingFields(schema: JsonSchema, value: Value, path: string): string[] {
  if (!(schema.type === "object" || schema.properties)) return [];
  const current = (value && typeof value === "object" ? value : {}) as Record<string, Value>;
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const missing: string[] = [];
  for (const name of (schema.required ?? []) as string[]) {
    if (current[name] === undefined) missing.push(path ? `${path}.${name}` : name);
  }
  for (const [name, child] of Object.entries(properties)) {
    if (current[name] !== undefined) {
      missing.push(...missingFields(child, current[name], path ? `${path}.${name}` : name));
    }
  }
  return missing;
}

function Field({ schema, value, onChange, path }: FieldProps) {
  const type = schema.type;
  if (Array.isArray(schema.enum)) {
    return <EnumField schema={schema} value={value} onChange={onChange} path={path} />;
  }
  if ((type === "object" || schema.properties) && hasProperties(schema)) {
    return <ObjectFields schema={schema} value={value} onChange={onChange} path={path} />;
  }
  if (type === "string") {
    const long = typeof schema.maxLength !== "number" || schema.maxLength > 120;
    const text = typeof value === "string" ? value : "";
    const set = (next: string) => onChange(next === "" ? undefined : next);
    return long && !schema.format ? (
      <textarea
        class="input"
        rows={2}
        name={path}
        value={text}
        onInput={(e) => set(e.currentTarget.value)}
      />
    ) : (
      <input
        class="input"
        name={path}
        value={text}
        placeholder={typeof schema.format === "string" ? schema.format : ""}
        onInput={(e) => set(e.currentTarget.value)}
      />
    );
  }
  if (type === "number" || type === "integer") {
    return (
      <input
        class="input"
        type="number"
        name={path}
        step={type === "integer" ? 1 : "any"}
        value={typeof value === "number" ? String(value) : ""}
        onInput={(e) => {
          const text = e.currentTarget.value;
          onChange(text === "" ? undefined : Number(text));
        }}
      />
    );
  }
  if (type === "boolean") {
    return <YesNoField schema={schema} value={value} onChange={onChange} path={path} />;
  }
  return <JsonField value={value} onChange={onChange} name={path} />;
}

/** Words for a yes-or-no field named like an approval; others read yes and no. */
const APPROVAL = /(^|[._-])(approved?|accept(ed)?|confirm(ed)?|allow(ed)?|grant(ed)?)$/i;

/**
 * A yes-or-no as two choices named for what they mean, "Approve" and "Reject" for an approval
 * (`approved`, `confirm`…), else "Yes" and "No"; a schema's `oneOf` of `const` true and false
 * with titles names them itself. The JSON value each sends is shown beside it.
 */
function YesNoField({ schema, value, onChange, path }: FieldProps) {
  const [yes, no] = yesNoWords(schema, path);
  const choice = (answer: boolean, word: string) => (
    <label class={`choice${value === answer ? " chosen" : ""}`}>
      <input
        type="radio"
        name={path}
        value={String(answer)}
        checked={value === answer}
        onChange={() => onChange(answer)}
      />
      <span>{word}</span>
      <code class="muted small">{String(answer)}</code>
    </label>
  );
  return (
    <div class="choices" role="radiogroup" aria-label={path}>
      {choice(true, yes)}
      {choice(false, no)}
    </div>
  );
}

function yesNoWords(schema: JsonSchema, path: string): [string, string] {
  const titled = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  const title = (answer: boolean) =>
    titled?.find((s) => s.const === answer && typeof s.title === "string")?.title as
      | string
      | undefined;
  const [yes, no] = APPROVAL.test(path) ? ["Approve", "Reject"] : ["Yes", "No"];
  return [title(true) ?? yes, title(false) ?? no];
}

function hasProperties(schema: JsonSchema): boolean {
  return Object.keys((schema.properties ?? {}) as object).length > 0;
}

function ObjectFields({ schema, value, onChange, path }: FieldProps) {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const current = (value && typeof value === "object" ? value : {}) as Record<string, Value>;
  const set = (name: string, next: Value) => {
    const copy = { ...current };
    if (next === undefined) delete copy[name];
    else copy[name] = next;
    onChange(copy);
  };
  return (
    <div class="form-fields">
      {Object.entries(properties).map(([name, child]) => {
        const childPath = path ? `${path}.${name}` : name;
        return (
          <div class="form-field" key={name}>
            <div class="form-label">
              <code>{name}</code>
              {required.has(name) && <span class="tag required">required</span>}
              {typeof child.description === "string" && (
                <span class="muted small"> {child.description}</span>
              )}
            </div>
            <Field
              schema={child}
              value={current[name]}
              onChange={(next) => set(name, next)}
              path={childPath}
            />
          </div>
        );
      })}
    </div>
  );
}

function EnumField({ schema, value, onChange, path }: FieldProps) {
  const options = schema.enum as unknown[];
  const index = options.findIndex((o) => JSON.stringify(o) === JSON.stringify(value));
  return (
    <select
      class="input"
      name={path}
      value={index === -1 ? "" : String(index)}
      onChange={(e) => {
        const i = e.currentTarget.value;
        onChange(i === "" ? undefined : options[Number(i)]);
      }}
    >
      <option value="">—</option>
      {options.map((option, i) => (
        <option key={i} value={String(i)}>
          {typeof option === "string" ? option : JSON.stringify(option)}
        </option>
      ))}
    </select>
  );
}

/**
 * A JSON text box. It keeps the text as typed; `onChange` gets the parsed value only when the
 * text is valid JSON (empty text is `undefined`), and the box says what is wrong otherwise.
 */
export function JsonField(props: {
  value: Value;
  onChange(value: Value): void;
  onValid?(valid: boolean): void;
  name?: string;
  rows?: number;
  placeholder?: string;
}) {
  const { value, onChange, onValid, name, rows = 4, placeholder } = props;
  const [text, setText] = useState(value === undefined ? "" : pretty(value));
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    // A value set from outside (a preset) replaces the text unless it already says the same.
    let same = false;
    try {
      same =
        text.trim() === ""
          ? value === undefined
          : JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
    } catch {
      same = false;
    }
    if (!same && problem === null) setText(value === undefined ? "" : pretty(value));
  }, [value]);
  return (
    <div class="json-field">
      <textarea
        class={`input mono${problem ? " invalid" : ""}`}
        name={name}
        rows={rows}
        spellcheck={false}
        placeholder={placeholder ?? "JSON"}
        value={text}
        onInput={(e) => {
          const next = e.currentTarget.value;
          setText(next);
          if (next.trim() === "") {
            setProblem(null);
            onValid?.(true);
            onChange(undefined);
            return;
          }
          try {
            const parsed = JSON.parse(next);
            setProblem(null);
            onValid?.(true);
            onChange(parsed);
          } catch (error) {
            setProblem((error as Error).message);
            onValid?.(false);
          }
        }}
      />
      {problem && <div class="field-error small">not JSON: {problem}</div>}
    </div>
  );
}

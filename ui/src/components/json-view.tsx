import { useState } from "preact/hooks";
import { childPath } from "../lib/diff";

interface Props {
  value: unknown;
  /** Levels open at first. */
  open?: number;
  /** JSON Pointer paths to highlight (what the last update changed). */
  highlight?: Set<string>;
}

/** A collapsible JSON tree: objects and arrays fold, leaves are coloured by type. */
export function JsonView({ value, open = 2, highlight }: Props) {
  return (
    <div class="json">
      <Node value={value} depth={0} open={open} path="" highlight={highlight} />
    </div>
  );
}

function Node(props: {
  name?: string;
  value: unknown;
  depth: number;
  open: number;
  path: string;
  highlight?: Set<string>;
}) {
  const { name, value, depth, open, path, highlight } = props;
  const [expanded, setExpanded] = useState(depth < open);
  const marked = highlight?.has(path) && path !== "";
  const label = name === undefined ? null : <span class="json-key">{name}: </span>;
  if (value === null || typeof value !== "object") {
    return (
      <div class={`json-row${marked ? " changed" : ""}`}>
        {label}
        <Leaf value={value} />
      </div>
    );
  }
  const isArray = Array.isArray(value);
  const entries = isArray
    ? (value as unknown[]).map((v, i) => [String(i), v] as const)
    : Object.entries(value as Record<string, unknown>);
  const [openMark, closeMark] = isArray ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) {
    return (
      <div class={`json-row${marked ? " changed" : ""}`}>
        {label}
        <span class="json-punct">
          {openMark}
          {closeMark}
        </span>
      </div>
    );
  }
  return (
    <div class={`json-node${marked ? " changed" : ""}`}>
      <button
        type="button"
        class="json-toggle"
        aria-expanded={expanded}
        onClick={() => setExpanded(!expanded)}
      >
        <span class="json-caret">{expanded ? "▾" : "▸"}</span>
        {label}
        <span class="json-punct">{openMark}</span>
        {!expanded && (
          <span class="json-summary">
            {isArray ? `${entries.length} items` : summarizeKeys(entries.map(([k]) => k))}
            <span class="json-punct">{closeMark}</span>
          </span>
        )}
      </button>
      {expanded && (
        <div class="json-children">
          {entries.map(([key, child]) => (
            <Node
              key={key}
              name={key}
              value={child}
              depth={depth + 1}
              open={open}
              path={childPath(path, key)}
              highlight={highlight}
            />
          ))}
          <span class="json-punct">{closeMark}</span>
        </div>
      )}
    </div>
  );
}

function summarizeKeys(keys: string[]): string {
  const shown = keys.slice(0, 4).join(", ");
  return keys.length > 4 ? `${shown}, … ${keys.length - 4} more` : shown;
}

function Leaf({ value }: { value: unknown }) {
  if (typeof value === "string") {
    const text = value.length > 2000 ? `${value.slice(0, 2000)}… (${value.length} chars)` : value;
    return <span class="json-string">"{text}"</span>;
  }
  if (typeof value === "number") return <span class="json-number">{String(value)}</span>;
  if (typeof value === "boolean") return <span class="json-boolean">{String(value)}</span>;
  if (value === null) return <span class="json-null">null</span>;
  return <span class="json-null">{String(value)}</span>;
}

/**
 * The JSON Pointer paths where `after` differs from `before`: changed, added and removed
 * leaves, and the containers holding them. Used to highlight what a state update changed.
 */
export function changedPaths(before: unknown, after: unknown): Set<string> {
  const out = new Set<string>();
  walk(before, after, "", out);
  return out;
}

function walk(before: unknown, after: unknown, path: string, out: Set<string>): boolean {
  if (before === after) return false;
  const bothObjects =
    typeof before === "object" &&
    typeof after === "object" &&
    before !== null &&
    after !== null &&
    Array.isArray(before) === Array.isArray(after);
  if (!bothObjects) {
    out.add(path);
    return true;
  }
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  let changed = false;
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const child = `${path}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    if (!(key in a) || !(key in b)) {
      out.add(child);
      changed = true;
    } else if (walk(a[key], b[key], child, out)) changed = true;
  }
  if (changed) out.add(path);
  return changed;
}

/** The pointer of a child of `path` (as `changedPaths` spells it). */
export function childPath(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/**
 * RFC 6902 with copy-on-write: applies a patch to a JSON document without touching it,
 * copying only the containers on the path of each operation (the rest is shared with the
 * input). All or nothing: when an operation fails the error propagates and the input is as
 * it was, since nothing of it was ever written to.
 *
 * fast-json-patch's own atomic mode deep-clones the whole document per patch (a cost that
 * grows with the state, paid on every STATE_DELTA), and inserts operation values by
 * reference, so a later operation in the same patch could write into the producer's
 * event. Here every container is copied before its first write, whoever it came from.
 */
// The ESM entry explicitly: the package root also ships an index.ts that tsx would pick.
import { applyOperation, type Operation } from "fast-json-patch/index.mjs";

type Container = Record<string, unknown> | unknown[];

const isContainer = (value: unknown): value is Container =>
  typeof value === "object" && value !== null;

const unescapeToken = (token: string): string =>
  token.indexOf("~") === -1 ? token : token.replace(/~1/g, "/").replace(/~0/g, "~");

function ownCopy(value: Container, owned: Set<unknown>): Container {
  if (owned.has(value)) return value;
  const copy = Array.isArray(value) ? value.slice() : { ...value };
  owned.add(copy);
  return copy;
}

/** Makes every container above the pointer's target owned; returns the (owned) root. */
function ownPath(root: unknown, pointer: string, owned: Set<unknown>): unknown {
  if (!isContainer(root)) return root;
  const top = ownCopy(root, owned);
  if (pointer === "") return top;
  const tokens = pointer.split("/");
  let parent: Container = top;
  // tokens[0] is the empty string before the leading "/"; the last token names the target.
  for (let i = 1; i < tokens.length - 1; i++) {
    const key = unescapeToken(tokens[i]!);
    if (!Object.hasOwn(parent, key)) break;
    const child = (parent as Record<string, unknown>)[key];
    if (!isContainer(child)) break;
    const copy = ownCopy(child, owned);
    (parent as Record<string, unknown>)[key] = copy;
    parent = copy;
  }
  return top;
}

/** The patched document; throws (leaving `document` untouched) if any operation fails. */
export function applyPatchAtomically(document: unknown, patch: readonly unknown[]): unknown {
  const owned = new Set<unknown>();
  let root = document;
  for (let i = 0; i < patch.length; i++) {
    const op = patch[i] as Operation & { from?: unknown };
    if (op.op !== "test") {
      root = ownPath(root, op.path, owned);
      if (op.op === "move" && typeof op.from === "string") root = ownPath(root, op.from, owned);
    }
    root = applyOperation(root, op, true, true, true, i).newDocument;
  }
  return root;
}

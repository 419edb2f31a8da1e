import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
} from "yaml";
import { ConfigError, type ConfigIssue } from "./errors.js";
import type { KeyPath, LoadedConfig, SourcePosition } from "./schema.js";

export type ConfigFormat = "yaml" | "json";

export interface ParsedSource {
  data: unknown;
  locate: LoadedConfig["locate"];
}

/** `.json` → json; anything else is read as YAML (a superset of JSON). */
export function formatFromFilename(filename: string): ConfigFormat {
  return filename.toLowerCase().endsWith(".json") ? "json" : "yaml";
}

/**
 * Parses the text into plain data plus a `locate` function for key paths. Throws ConfigError
 * naming the parser's message and position when the text does not parse.
 */
export function parseSource(text: string, file: string, format: ConfigFormat): ParsedSource {
  return format === "json" ? parseJson(text, file) : parseYaml(text, file);
}

function parseYaml(text: string, file: string): ParsedSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, merge: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => ({
        path: [],
        message:
          e.code === "DUPLICATE_KEY"
            ? duplicateKeyMessage(text, e.pos[0])
            : e.code === "MULTIPLE_DOCS"
              ? "a config file holds one YAML document; a second one starts here"
              : `invalid YAML: ${e.message}`,
        position: toPosition(lineCounter.linePos(e.pos[0])),
      })),
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    throw new ConfigError(file, [
      {
        path: [],
        message: `the YAML could not be read: ${(err as Error).message}`,
        position: null,
      },
    ]);
  }
  return { data, locate: locator(doc, lineCounter) };
}

function parseJson(text: string, file: string): ParsedSource {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    // Node 20 says "… at position N"; later versions add "(line L column C)".
    const offset = /position (\d+)/.exec(message)?.[1];
    const position = offsetToPosition(text, offset === undefined ? text.length : Number(offset));
    const clean = message
      .replace(/\s*\(line \d+ column \d+\)$/, "")
      .replace(/ in JSON at position \d+$/, "");
    throw new ConfigError(file, [{ path: [], message: `invalid JSON: ${clean}`, position }]);
  }
  // JSON is YAML 1.2, so the YAML parser gives positions for free. JSON.parse silently keeps
  // the last of two equal keys; we report that as the typo it almost always is.
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const duplicates: ConfigIssue[] = doc.errors
    .filter((e) => e.code === "DUPLICATE_KEY")
    .map((e) => ({
      path: [],
      message: duplicateKeyMessage(text, e.pos[0]),
      position: toPosition(lineCounter.linePos(e.pos[0])),
    }));
  if (duplicates.length > 0) throw new ConfigError(file, duplicates);
  if (doc.errors.length > 0) return { data, locate: () => null };
  return { data, locate: locator(doc, lineCounter) };
}

function duplicateKeyMessage(text: string, offset: number): string {
  const key = /^(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^:,{}[\]\s]+))/.exec(text.slice(offset));
  const name = key ? (key[1] ?? key[2] ?? key[3]) : undefined;
  return name === undefined
    ? "a key appears twice in the same mapping"
    : `key "${name}" appears twice in the same mapping`;
}

function locator(doc: Document, lineCounter: LineCounter): LoadedConfig["locate"] {
  return (path: KeyPath, at: "key" | "value" = "value"): SourcePosition | null => {
    const offset = locateOffset(doc, path, at);
    return offset === null ? null : toPosition(lineCounter.linePos(offset));
  };
}

function locateOffset(doc: Document, path: KeyPath, at: "key" | "value"): number | null {
  let node: unknown = doc.contents;
  let best = startOf(node);
  for (let i = 0; i < path.length; i++) {
    if (isAlias(node)) node = node.resolve(doc);
    const segment = path[i];
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === String(segment));
      if (!pair) break;
      const keyStart = startOf(pair.key);
      if (i === path.length - 1 && at === "key") return keyStart ?? best;
      node = pair.value;
      best = startOf(node) ?? keyStart ?? best;
    } else if (isSeq(node) && typeof segment === "number") {
      node = node.items[segment];
      if (node === undefined) break;
      best = startOf(node) ?? best;
    } else {
      break;
    }
  }
  return best;
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  return typeof key === "string" ? key : undefined;
}

function startOf(node: unknown): number | null {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : null;
}

function toPosition(pos: { line: number; col: number }): SourcePosition {
  return { line: pos.line, column: pos.col };
}

export function offsetToPosition(text: string, offset: number): SourcePosition {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return { line, column };
}

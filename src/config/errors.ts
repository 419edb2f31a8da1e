import type { KeyPath, SourcePosition } from "./schema.js";

/** One problem found in a config file. */
export interface ConfigIssue {
  /** Key path into the document, e.g. `["agents", 1, "adapter", "type"]`; empty for the file. */
  path: KeyPath;
  /** What is wrong, worded to follow the printed path (`must be a string (got 5)`). */
  message: string;
  position: SourcePosition | null;
}

/**
 * A start-up error: the config file is missing, unparseable or invalid, or an agent's schemas
 * do not compile. The message lists every problem, one per line, each as
 * `file:line:column: key.path message`.
 */
export class ConfigError extends Error {
  readonly file: string;
  readonly issues: readonly ConfigIssue[];

  constructor(file: string, issues: readonly ConfigIssue[]) {
    const sorted = [...issues].sort(compareIssues);
    const lines = sorted.map((issue) => formatIssue(file, issue));
    super(
      lines.length === 1
        ? lines[0]!
        : `${file}: ${lines.length} problems in the config\n${lines.map((l) => `  ${l}`).join("\n")}`,
    );
    this.name = "ConfigError";
    this.file = file;
    this.issues = sorted;
  }
}

/** The config file itself could not be read (missing, a directory, no permission). */
export class ConfigFileUnreadable extends ConfigError {
  constructor(file: string, message: string) {
    super(file, [{ path: [], message, position: null }]);
    this.name = "ConfigFileUnreadable";
  }
}

function compareIssues(a: ConfigIssue, b: ConfigIssue): number {
  if (a.position && b.position) {
    return a.position.line - b.position.line || a.position.column - b.position.column;
  }
  return a.position ? -1 : b.position ? 1 : 0;
}

export function formatIssue(file: string, issue: ConfigIssue): string {
  const where = issue.position ? `${file}:${issue.position.line}:${issue.position.column}` : file;
  const path = formatKeyPath(issue.path);
  if (path) return `${where}: ${path} ${issue.message}`;
  // A schema error about the document itself ("must be an object").
  return issue.message.startsWith("must ")
    ? `${where}: the config ${issue.message}`
    : `${where}: ${issue.message}`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `["agents", 1, "adapter", "headers", "X-Key"]` → `agents[1].adapter.headers["X-Key"]`. */
export function formatKeyPath(path: KeyPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

import type { ConfigIssue } from "./errors.js";
import type { KeyPath, LoadedConfig } from "./schema.js";

/**
 * What resolving a config file's values needs: where relative paths start, the environment, and
 * where problems are collected with their place in the file.
 */
export interface ResolveContext {
  baseDir: string;
  env: Record<string, string | undefined>;
  issues: ConfigIssue[];
  locate: LoadedConfig["locate"];
}

export function issue(context: ResolveContext, path: KeyPath, message: string): void {
  context.issues.push({ path, message, position: context.locate(path) });
}

import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** The package root: two levels above src/util/ (tsx, vitest) or dist/util/ (built). */
export const packageRoot = resolve(here, "..", "..");

/** Path of a bundled protocol document under schemas/. */
export function schemaPath(name: string): string {
  const path = resolve(packageRoot, "schemas", name);
  if (!existsSync(path)) throw new Error(`bundled schema ${name} is missing at ${path}`);
  return path;
}

let version: string | undefined;

/**
 * The package's version, from its package.json (read once): what `--version` prints, the
 * inspector shows and CopilotKit's runtime info reports. A package.json without one is a broken
 * install, said as such.
 */
export function packageVersion(): string {
  if (version === undefined) {
    const manifest = JSON.parse(readFileSync(resolve(packageRoot, "package.json"), "utf8")) as {
      version?: unknown;
    };
    if (typeof manifest.version !== "string") {
      throw new Error(`${resolve(packageRoot, "package.json")} has no version`);
    }
    version = manifest.version;
  }
  return version;
}

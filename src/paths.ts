import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** The package root: one level above src/ (tsx, vitest) or dist/ (built). */
export const packageRoot = resolve(here, "..");

/** Path of a bundled protocol document under schemas/. */
export function schemaPath(name: string): string {
  const path = resolve(packageRoot, "schemas", name);
  if (!existsSync(path)) throw new Error(`bundled schema ${name} is missing at ${path}`);
  return path;
}

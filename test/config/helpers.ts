import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { ConfigError } from "../../src/config/errors.js";

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const samplePath = join(root, "config/sample.yaml");

/** Validators for ACP components and AG-UI definitions, compiled from the bundled documents. */
export function specValidators() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  // OpenAPI refs are `#/components/schemas/…`: add the whole document under an id and
  // reference into it.
  ajv.addSchema(JSON.parse(readFileSync(join(root, "schemas/acp.openapi.json"), "utf8")), "acp");
  const agui = JSON.parse(readFileSync(join(root, "schemas/ag-ui.schema.json"), "utf8"));
  ajv.addSchema(agui);
  return {
    acp: (name: string) => ajv.getSchema(`acp#/components/schemas/${name}`)!,
    agui: (name: string) => ajv.getSchema(`${agui.$id}#/$defs/${name}`)!,
  };
}

/** Runs `fn`, which must throw a ConfigError, and returns it. */
export async function configError(fn: () => Promise<unknown> | unknown): Promise<ConfigError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError, but nothing was thrown");
}

/** A fresh temporary directory holding the given files. */
export async function tempDir(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "acp-agui-config-"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

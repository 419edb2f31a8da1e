import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const schemasDir = path.join(repoRoot, "schemas");

/**
 * The sha256 of each protocol document the server is built to (ACP 0.2.1's OpenAPI document, the
 * AG-UI 1.0 JSON Schema), recorded in schemas/SHA256SUMS in `sha256sum` format, so
 * `sha256sum -c` checks them too. The server serves and compiles these files as they are: an
 * edit must come with a deliberate new digest, never drift in silently.
 */
const recorded = new Map(
  readFileSync(path.join(schemasDir, "SHA256SUMS"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [digest, file] = line.split(/\s+\*?/, 2);
      return [file!, digest!] as const;
    }),
);

describe("bundled wire documents", () => {
  for (const file of ["acp.openapi.json", "ag-ui.schema.json"]) {
    it(`schemas/${file} is byte-for-byte the document its recorded digest names`, () => {
      const bundled = readFileSync(path.join(schemasDir, file));
      const digest = createHash("sha256").update(bundled).digest("hex");
      expect(recorded.get(file)).toMatch(/^[0-9a-f]{64}$/);
      expect(digest).toBe(recorded.get(file));
    });
  }
});

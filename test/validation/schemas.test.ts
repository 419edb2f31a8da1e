import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
// CI clones the repository beside a copy of shared/, so the seeds sit one level up.
const seeds = path.resolve(repoRoot, "../shared/seeds");

describe("bundled wire documents", () => {
  for (const file of ["acp.openapi.json", "ag-ui.schema.json"]) {
    it(`schemas/${file} is byte-for-byte the shared seed`, () => {
      const bundled = readFileSync(path.join(repoRoot, "schemas", file));
      const seed = readFileSync(path.join(seeds, file));
      expect(bundled.equals(seed)).toBe(true);
    });
  }
});

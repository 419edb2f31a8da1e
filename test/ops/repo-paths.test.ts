import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repoRoot = resolve(import.meta.dirname, "../..");
const script = join(repoRoot, "scripts/check-repo-paths.mjs");
// Built from parts, so that this file itself passes the check it tests.
const parent = "..";
const sibling = `${parent}/shared`;

async function check(root: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [script, root]);
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

let scratch: string | undefined;
afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

/** A scratch repository holding the given files (path → content). */
function repository(files: Record<string, string>): string {
  scratch = mkdtempSync(join(tmpdir(), "repo-paths-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(scratch, path)), { recursive: true });
    writeFileSync(join(scratch, path), content);
  }
  return scratch;
}

describe("the repository reads nothing beside itself", () => {
  it("no file in src, test, bench or scripts names the folder beside the repository", async () => {
    const { code, out } = await check(repoRoot);
    expect(out).toContain("none reads beside the repository");
    expect(code).toBe(0);
  });

  it("the check fails and names file and line when a test reads from beside the repository", async () => {
    const root = repository({
      "src/app.ts": "export const ok = 1;\n",
      "test/corpus.ts": `const ok = 1;\nconst dir = path.resolve(root, "${sibling}/conformance");\n`,
      "scripts/build.mjs": `const seeds = path.join(root, "${parent}", "shared", "seeds");\n`,
    });
    const { code, out } = await check(root);
    expect(code).toBe(1);
    expect(out).toContain("test/corpus.ts:2:");
    expect(out).toContain("scripts/build.mjs:1:");
    expect(out).not.toContain("src/app.ts");
  });

  it("the check looks in bench and the CI entry point too, but not in installed packages", async () => {
    const root = repository({
      "bench/run.mjs": `import "${sibling}/x.js";\n`,
      ".ci/run": `cat ${sibling}/seeds/a.json\n`,
      "node_modules/pkg/index.js": `require("${sibling}/x");\n`,
    });
    const { code, out } = await check(root);
    expect(code).toBe(1);
    expect(out).toContain("bench/run.mjs:1:");
    expect(out).toContain(".ci/run:1:");
    expect(out).not.toContain("node_modules");
  });
});

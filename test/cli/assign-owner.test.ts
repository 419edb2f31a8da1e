import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createStorage } from "../../src/storage/index.js";

const root = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "acp-agui-assign-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real CLI, through tsx as `npm run dev` runs it. */
function cli(args: string[], env: Record<string, string> = {}) {
  const { status, stdout, stderr } = spawnSync(
    process.execPath,
    ["--import", "tsx", "src/cli.ts", ...args],
    { cwd: root, env: { ...process.env, DATABASE_URL: "", ...env }, encoding: "utf8" },
  );
  return { status, stdout, stderr };
}

describe("acp-agui assign-owner", () => {
  it("gives every thread and run without an owner to the principal named, and says how many", async () => {
    const db = join(dir, "legacy.db");
    const storage = createStorage(db);
    await storage.open();
    const legacy = await storage.createThread({
      thread_id: crypto.randomUUID(),
      metadata: {},
      if_exists: "raise",
    });
    const owned = await storage.createThread({
      thread_id: crypto.randomUUID(),
      metadata: {},
      if_exists: "raise",
      principal: "user:alice",
    });
    await storage.close();

    const result = cli(["assign-owner", "--db", db, "--owner", "key:backend"]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toBe("assigned 1 threads and 0 runs without an owner to key:backend\n");

    const after = createStorage(db);
    await after.open();
    expect((await after.getThread(legacy.thread.thread_id))?.principal).toBe("key:backend");
    expect((await after.getThread(owned.thread.thread_id))?.principal).toBe("user:alice");
    await after.close();
  });

  it.each([
    [["assign-owner", "--owner", "key:x"], "assign-owner needs --db PATH|URL (or DATABASE_URL)"],
    [["assign-owner", "--db", "x.db"], "assign-owner needs --owner key:NAME|user:ID"],
    [
      ["assign-owner", "--db", "x.db", "--owner", "alice"],
      "--owner must be key:NAME (an API key's name) or user:ID (a token's user id), got \"alice\"",
    ],
    [["serve", "--owner", "key:x"], "--owner belongs to assign-owner, not serve"],
  ])("%j › one line naming the mistake, where the usage is, exit status 2", (args, line) => {
    const result = cli(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`acp-agui: ${line}\nRun acp-agui --help for the usage.\n`);
  });
});

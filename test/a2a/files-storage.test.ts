/**
 * A large file sent over A2A is stored with the run and the thread, not once per frame: a run
 * that streams hundreds of frames after it stores the file in its frames once (the segment's
 * first values frame, which the others are rebuilt from), as a run of a single frame does.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../src/config/settings.js";
import { createStorage } from "../../src/storage/index.js";
import { type FramePage, pageText } from "../../src/storage/sqlite/frame-pages.js";
import { build } from "../helpers/app.js";

const dir = mkdtempSync(join(tmpdir(), "acp-agui-a2a-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How many times `marker` occurs in each table's rows (blobs read as bytes). */
function occurrences(file: string, marker: string): Record<string, number> {
  const db = new Database(file, { readonly: true });
  const counts: Record<string, number> = {};
  const tables = db.prepare("select name from sqlite_master where type = 'table'").all();
  for (const { name } of tables as { name: string }[]) {
    for (const row of db.prepare(`select * from "${name}"`).all() as object[]) {
      // Frame pages may be stored deflated: counted in their text.
      if (name === "run_frames") Object.assign(row, { data: pageText(row as FramePage) });
      for (const value of Object.values(row)) {
        const text = Buffer.isBuffer(value) ? value.toString("latin1") : String(value);
        counts[name] = (counts[name] ?? 0) + text.split(marker).length - 1;
      }
    }
  }
  db.close();
  return counts;
}

it("stores a file in a run's frames once, however many frames follow it", async () => {
  const file = join(dir, "files.db");
  const storage = createStorage(file);
  const t = await build({
    storage,
    unchecked: true,
    baseDir: `${process.cwd()}/test/fixtures/modules`,
    settings: { limits: { ...DEFAULT_LIMITS, maxBodyBytes: 2 << 20, maxStringLength: 2 << 20 } },
    yaml: `
agents:
  - name: media
    version: 1.0.0
    description: Describes files; says many things.
    adapter: { type: module, path: ./media-agent.mjs }
`,
  });
  // Random bytes: the text's pieces cannot be found anywhere by chance, nor compressed away.
  const raw = randomBytes(300_000).toString("base64");
  const contextId = randomUUID();
  const send = async (parts: unknown[]) => {
    const response = await t.app.inject({
      method: "POST",
      url: "/a2a/media",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      payload: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: randomUUID(), contextId, role: "ROLE_USER", parts } },
      }),
    });
    return JSON.parse(response.body).result.task.status.state;
  };
  expect(await send([{ text: "see" }, { raw, mediaType: "application/octet-stream" }])).toBe(
    "TASK_STATE_COMPLETED",
  );
  // A second run on the same conversation: 400 frames, the file in the thread it starts from.
  expect(await send([{ text: "many 400" }])).toBe("TASK_STATE_COMPLETED");
  await t.close();
  await storage.close();

  const counts = occurrences(file, raw.slice(1000, 1100));
  // The run the file came with holds it once; each run's frames hold it once (their first
  // values frame); not once per frame.
  expect(counts.runs).toBe(1);
  expect(counts.run_frames).toBe(2);
});

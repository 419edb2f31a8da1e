import { expect, it } from "vitest";
import type { RunRecord, RunSearch } from "../../../src/storage/types.js";
import { makeRun, makeThread, type StorageFactory, tick, useStorage } from "./helpers.js";

/**
 * The run search as the A2A face lists tasks: the most recently updated first with keyset
 * pages, filters on started segments, several statuses, an output's errcode and the update
 * time, and the count of every match.
 */
export function describeRunSearch(factory: StorageFactory): void {
  const context = useStorage(factory);

  it("orders by the last update, pages by position, filters and counts every match", async () => {
    const { storage } = context;
    const thread = (await makeThread(storage)).thread_id;
    const runs: Record<string, RunRecord> = {};
    for (const name of ["done", "queued", "working", "cancelled", "failed", "timedOut"]) {
      runs[name] = await makeRun(storage, thread);
      await tick();
    }
    const segment = { agui_run_id: "a", started_at: new Date().toISOString(), ended_at: null };
    const error = (errcode: number) => ({ type: "error", errcode, description: "no" });
    // Updated in this order, so the newest update is the first run created.
    const updates: [string, Parameters<typeof storage.updateRun>[1]][] = [
      ["queued", { start_after: new Date().toISOString() }],
      ["working", { segments: [segment] }],
      ["cancelled", { status: "error", output: error(499) }],
      ["failed", { status: "error", output: error(500) }],
      ["timedOut", { status: "timeout", output: error(504) }],
      ["done", { status: "success", output: { type: "result" } }],
    ];
    for (const [name, patch] of updates) {
      runs[name] = await storage.updateRun(runs[name]!.run_id, patch);
      await tick();
    }
    const names = (found: RunRecord[]) =>
      found.map((run) => Object.keys(runs).find((name) => runs[name]!.run_id === run.run_id));
    const base: RunSearch = { thread_id: thread, order: "updated", limit: 100, offset: 0 };
    const newestUpdateFirst = updates.map(([name]) => name).reverse();
    expect(names(await storage.searchRuns(base))).toEqual(newestUpdateFirst);
    expect(await storage.countSearchRuns(base)).toBe(6);

    // Pages of two, each after the last run of the one before: every run once, in order.
    const paged: RunRecord[] = [];
    let after: RunSearch["after"];
    for (let page = 0; page < 4; page++) {
      const found = await storage.searchRuns({ ...base, limit: 2, ...(after ? { after } : {}) });
      paged.push(...found);
      const last = found.at(-1);
      if (!last) break;
      after = { updated_at: last.updated_at, run_id: last.run_id };
    }
    expect(names(paged)).toEqual(newestUpdateFirst);
    expect(await storage.countSearchRuns({ ...base, limit: 2, after })).toBe(6);

    const find = async (filter: Partial<RunSearch>) => {
      const search = { ...base, ...filter };
      const found = names(await storage.searchRuns(search));
      expect(await storage.countSearchRuns(search)).toBe(found.length);
      return found;
    };
    expect(await find({ status: "pending", started: false })).toEqual(["queued"]);
    expect(await find({ status: "pending", started: true })).toEqual(["working"]);
    expect(await find({ status: "error", errcode: { value: 499, is: true } })).toEqual([
      "cancelled",
    ]);
    expect(
      await find({ statuses: ["error", "timeout"], errcode: { value: 499, is: false } }),
    ).toEqual(["timedOut", "failed"]);
    expect(await find({ statuses: ["success", "pending"] })).toEqual(["done", "working", "queued"]);
    expect(await find({ updated_since: runs.failed!.updated_at })).toEqual([
      "done",
      "timedOut",
      "failed",
    ]);
    // The default order stays the newest created first.
    const created = names(await storage.searchRuns({ ...base, order: "created" }));
    expect(created).toEqual(Object.keys(runs).reverse());
  });
}

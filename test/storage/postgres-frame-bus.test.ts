import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { PostgresFrameBus } from "../../src/storage/postgres/frame-bus.js";
import { id, sleep } from "./contract/helpers.js";
import { newSchemaName, requirePostgres, TEST_DATABASE_URL } from "./pg-helpers.js";

// The bus between replicas (frame-bus.ts): notifications go out in batches, one batch at a
// time. None may be lost or reordered, whether they were queued in one turn or while a batch
// was on its way, and what was queued before close() still goes out.

await requirePostgres();

const logger = pino({ level: process.env.BUS_LOG ?? "silent" });
const url = `${TEST_DATABASE_URL}?schema=${newSchemaName()}`;
const buses: PostgresFrameBus[] = [];
afterAll(async () => {
  for (const bus of buses) await bus.close();
});

async function pair(): Promise<{ from: PostgresFrameBus; to: PostgresFrameBus; heard: string[] }> {
  const from = await PostgresFrameBus.connect(url, logger);
  const to = await PostgresFrameBus.connect(url, logger);
  buses.push(from, to);
  const heard: string[] = [];
  to.onWork(() => heard.push("work"));
  return { from, to, heard };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe("PostgresFrameBus", () => {
  it("delivers every notification in order, those queued while a batch is on its way too", async () => {
    const { from, to, heard } = await pair();
    const runs = Array.from({ length: 60 }, () => id());
    for (const runId of runs) to.subscribe(runId, () => heard.push(runId));
    // Some in one turn, the rest a few at a time while earlier batches are in flight.
    for (const runId of runs.slice(0, 20)) from.announceStored(runId);
    for (let i = 20; i < runs.length; i += 5) {
      await new Promise((resolve) => setImmediate(resolve));
      for (const runId of runs.slice(i, i + 5)) from.announceStored(runId);
      if (i === 40) from.announceWork();
    }
    await until(() => heard.length === runs.length + 1, "every notification");
    expect(heard).toEqual([...runs.slice(0, 45), "work", ...runs.slice(45)]);
    // The sender does not hear itself.
    let echoed = 0;
    from.subscribe(runs[0]!, () => echoed++);
    from.announceStored(runs[0]!);
    await until(() => heard.length === runs.length + 2, "one more");
    expect(echoed).toBe(0);
  });

  it("tells nobody of a run its storage wrote once, and everyone of the others", async () => {
    const quiet: string = id();
    const writtenOnce = new Set([quiet]);
    const from = await PostgresFrameBus.connect(url, logger, {
      takeWrittenOnce: (runId) => writtenOnce.delete(runId),
    });
    const to = await PostgresFrameBus.connect(url, logger);
    buses.push(from, to);
    const heard: string[] = [];
    const loud = id();
    for (const runId of [quiet, loud]) to.subscribe(runId, () => heard.push(runId));
    from.announceStored(quiet);
    from.announceStored(loud);
    await until(() => heard.length === 1, "the other run's notification");
    // Asked once: a later store of the same run is announced (as any run's would be).
    from.announceStored(quiet);
    await until(() => heard.length === 2, "the later notification");
    expect(heard).toEqual([loud, quiet]);
  });

  it("sends what was queued before close", async () => {
    const { from, to, heard } = await pair();
    const runId = id();
    to.subscribe(runId, () => heard.push(runId));
    // (PostgreSQL delivers a notification repeated in one transaction once: these differ.)
    from.announceWork();
    from.announceStored(runId);
    await from.close();
    await until(() => heard.length === 2, "both announcements");
    expect(heard).toEqual(["work", runId]);
  });
});

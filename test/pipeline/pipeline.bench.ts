/**
 * Throughput of the segment pipeline on a synthetic mixed stream, beside @ag-ui/client's own
 * pipeline on the same events. Run: `npx vitest bench test/pipeline`.
 *
 * The client is measured on a smaller stream: its reducer clones every message on every
 * mutation, so its cost per event grows with the conversation and 100k events exhaust the
 * heap. Compare events per second, not totals.
 */
import { defaultApplyEvents, enforceEvents, transformChunks, verifyEvents } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";
import { bench, describe } from "vitest";
import { SegmentPipeline } from "../../src/pipeline/index.js";
import { mixedStream } from "./mixed-stream.js";

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "1";

function ours(events: ReadonlyArray<Record<string, unknown>>): void {
  const seg = new SegmentPipeline({ threadId: "bench-thread", runId: "bench-run" });
  for (const e of events) if (seg.push(e).fault) throw new Error("unexpected fault");
  if (seg.end().fault) throw new Error("unexpected fault at end");
}

const large = mixedStream(100_000);
const small = mixedStream(5_000);

describe("100k mixed events", () => {
  bench("SegmentPipeline", () => ours(large), { iterations: 10 });
});

describe("5k mixed events", () => {
  bench("SegmentPipeline", () => ours(small));
  bench("@ag-ui/client enforce → chunks → verify", async () => {
    await lastValueFrom(
      from(small as never[]).pipe(enforceEvents(), transformChunks(), verifyEvents(), toArray()),
    );
  });
  bench(
    "@ag-ui/client enforce → chunks → verify → defaultApplyEvents",
    async () => {
      const agent = { messages: [], state: {}, pendingInterrupts: [] } as never;
      const input = {
        threadId: "bench-thread",
        runId: "bench-run",
        messages: [],
        state: {},
      } as never;
      const events = from(small as never[]).pipe(
        enforceEvents(),
        transformChunks(),
        verifyEvents(),
      );
      await lastValueFrom(defaultApplyEvents(input, events, agent, []).pipe(toArray()));
    },
    { iterations: 2 },
  );
});

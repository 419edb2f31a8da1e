// In-process AG-UI event pipeline throughput, run in a child process of its own (pinned like the
// servers) by bench/run.mjs. Prints one JSON line.
//
// Ours: SegmentPipeline of the built server (dist/pipeline): validate → expand chunks → verify
// order → accumulate, one push() per event, then end().
// Baseline: @ag-ui/client's own pipeline on the same events:
//   enforceEvents → transformChunks → verifyEvents → defaultApplyEvents.
// The stream is test/pipeline/mixed-stream.ts (loaded through tsx, so it stays the one the
// vitest bench uses). The client pipeline clones the conversation on every mutation: its cost
// per event grows with the stream, 10k events take seconds and 20k exhaust a 4 GB heap, so the
// side-by-side comparison is made at a smaller size for both (BENCH_PIPELINE_CLIENT_EVENTS).
import { defaultApplyEvents, enforceEvents, transformChunks, verifyEvents } from "@ag-ui/client";
import { from, lastValueFrom, toArray } from "rxjs";
import { tsImport } from "tsx/esm/api";
import { SegmentPipeline } from "../dist/pipeline/index.js";

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "1";
const { mixedStream } = await tsImport("../test/pipeline/mixed-stream.ts", import.meta.url);

const BIG = Number(process.env.BENCH_PIPELINE_EVENTS ?? 100_000);
const SMALL = Number(process.env.BENCH_PIPELINE_CLIENT_EVENTS ?? 5_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_PIPELINE_ROUNDS ?? 3));

function ours(events) {
  const seg = new SegmentPipeline({ threadId: "bench-thread", runId: "bench-run" });
  for (const e of events) if (seg.push(e).fault) throw new Error("unexpected fault");
  if (seg.end().fault) throw new Error("unexpected fault at end");
}

async function client(events) {
  const agent = { messages: [], state: {}, pendingInterrupts: [] };
  const input = { threadId: "bench-thread", runId: "bench-run", messages: [], state: {} };
  const piped = from(events).pipe(enforceEvents(), transformChunks(), verifyEvents());
  await lastValueFrom(defaultApplyEvents(input, piped, agent, []).pipe(toArray()));
}

async function time(fn, events, repeat = 1) {
  // Each side starts on a clean heap: the client's pipeline leaves garbage that would otherwise
  // be collected during (and billed to) whatever runs next.
  globalThis.gc?.();
  const t0 = performance.now();
  for (let i = 0; i < repeat; i++) await fn(events);
  const ms = (performance.now() - t0) / repeat;
  return { ms, eps: events.length / (ms / 1000) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const big = mixedStream(BIG);
const small = mixedStream(SMALL);

const samples = { oursBig: [], oursSmall: [], clientSmall: [] };

// 1. Ours on the big stream, alone: warmed up on the same stream, timed before the client's
//    pipeline has run at all (its hundreds of MB of garbage and retained state would otherwise
//    be collected during our passes; measured: ~0.6 M events/s after it, ~1.3 M before).
for (let i = 0; i < 3; i++) ours(big);
for (let r = 0; r < ROUNDS; r++) samples.oursBig.push(await time(ours, big));

// 2. Both pipelines on the small stream, interleaved round after round.
for (let i = 0; i < 20; i++) ours(small);
for (let i = 0; i < 3; i++) await client(mixedStream(1000));
for (let r = 0; r < ROUNDS; r++) {
  const smallRepeat = Math.max(1, Math.round(200_000 / small.length));
  samples.oursSmall.push(await time(ours, small, smallRepeat));
  samples.clientSmall.push(await time(client, small));
}

const pick = (list) => ({
  eps: median(list.map((s) => s.eps)),
  msPerPass: median(list.map((s) => s.ms)),
  rounds: list.length,
});
process.stdout.write(
  `${JSON.stringify({
    bigEvents: big.length,
    smallEvents: small.length,
    oursBig: pick(samples.oursBig),
    oursSmall: pick(samples.oursSmall),
    clientSmall: pick(samples.clientSmall),
    heapUsedMb: Math.round(process.memoryUsage().heapUsed / 1e6),
  })}\n`,
);

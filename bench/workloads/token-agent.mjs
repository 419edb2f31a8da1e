// The `conversations` workload's in-process agent (a `module` agent): the same answer as
// token-upstream.mjs streams over HTTP — RUN_STARTED and TEXT_MESSAGE_START at once, then
// TOKENS text deltas due DELAY ms apart on an absolute schedule, TEXT_MESSAGE_END and
// RUN_FINISHED — so the in-process and the remote rows differ only in the path the events take.
//
// The server's config names this file with `adapter: { type: module, path, export: tokens }`;
// BENCH_CONV_TOKENS and BENCH_CONV_DELAY_MS (read from the server's environment) set the answer.
import { setTimeout as sleep } from "node:timers/promises";

const WORDS = ["the", "model", "streams", "an", "answer", "one", "token", "at", "a", "time"];

/** The i-th token's text (the upstream sends the same). */
export const tokenText = (i) => `${i === 0 ? "" : " "}${WORDS[i % WORDS.length]}`;

const TOKENS = Number(process.env.BENCH_CONV_TOKENS ?? 100);
const DELAY_MS = Number(process.env.BENCH_CONV_DELAY_MS ?? 20);

export async function* tokens(input, context) {
  const { threadId, runId } = input;
  const messageId = `msg-${runId}`;
  yield { type: "RUN_STARTED", threadId, runId };
  yield { type: "TEXT_MESSAGE_START", messageId, role: "assistant" };
  const start = performance.now();
  for (let i = 0; i < TOKENS; i++) {
    const wait = start + (i + 1) * DELAY_MS - performance.now();
    if (wait > 0) {
      try {
        await sleep(wait, undefined, { signal: context?.signal });
      } catch {
        return; // the run was stopped
      }
    }
    yield { type: "TEXT_MESSAGE_CONTENT", messageId, delta: tokenText(i) };
  }
  yield { type: "TEXT_MESSAGE_END", messageId };
  yield { type: "RUN_FINISHED", threadId, runId };
}

/**
 * A synthetic mixed AG-UI stream for throughput measurements: per "turn", a step with
 * streamed text, reasoning, a tool call with streamed arguments and its result, chunked
 * text, state deltas and pass-through RAW/CUSTOM events — roughly the mix a chatty agent
 * produces, dominated (as real streams are) by content deltas.
 */
export function mixedStream(
  target: number,
  threadId = "bench-thread",
  runId = "bench-run",
): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [{ type: "RUN_STARTED", threadId, runId }];
  events.push({ type: "STATE_SNAPSHOT", snapshot: { turn: 0, notes: [] } });
  for (let turn = 0; events.length < target - 1; turn++) {
    const step = `step-${turn}`;
    const m = `m-${turn}`;
    const r = `r-${turn}`;
    const c = `c-${turn}`;
    events.push({ type: "STEP_STARTED", stepName: step });
    events.push({ type: "REASONING_START", messageId: r });
    events.push({ type: "REASONING_MESSAGE_START", messageId: r, role: "reasoning" });
    for (let i = 0; i < 5; i++) {
      events.push({ type: "REASONING_MESSAGE_CONTENT", messageId: r, delta: "thinking " });
    }
    events.push({ type: "REASONING_MESSAGE_END", messageId: r });
    events.push({ type: "REASONING_END", messageId: r });
    events.push({ type: "TEXT_MESSAGE_START", messageId: m, role: "assistant" });
    for (let i = 0; i < 20; i++) {
      events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: m, delta: `tok${i} ` });
    }
    events.push({ type: "TEXT_MESSAGE_END", messageId: m });
    events.push({
      type: "TOOL_CALL_START",
      toolCallId: c,
      toolCallName: "search",
      parentMessageId: m,
    });
    for (let i = 0; i < 5; i++)
      events.push({ type: "TOOL_CALL_ARGS", toolCallId: c, delta: '{"q":1}' });
    events.push({ type: "TOOL_CALL_END", toolCallId: c });
    events.push({ type: "TOOL_CALL_RESULT", messageId: `t-${turn}`, toolCallId: c, content: "ok" });
    events.push({ type: "RAW", event: { provider: "x", n: turn } });
    events.push({
      type: "STATE_DELTA",
      delta: [{ op: "replace", path: "/turn", value: turn }],
    });
    events.push({ type: "TEXT_MESSAGE_CHUNK", messageId: `k-${turn}`, delta: "chunk " });
    for (let i = 0; i < 5; i++) events.push({ type: "TEXT_MESSAGE_CHUNK", delta: "more " });
    events.push({ type: "CUSTOM", name: "progress", value: { turn } });
    events.push({ type: "STEP_FINISHED", stepName: step });
  }
  events.push({ type: "RUN_FINISHED", threadId, runId });
  return events;
}

import { HttpAgent } from "@ag-ui/client";
import { decode } from "@ag-ui/proto";
import { createParser } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { aclThreadId } from "../../src/http/agui-runs/agui-runs.js";
import { aguiValidator, describeErrors } from "../../src/validation/index.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";

const PROTO = "application/vnd.ag-ui.event+proto";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message; "/approve …" asks first.
    adapter: { type: echo }
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 200 }
  - name: brief
    version: 1.0.0
    description: Echo that takes longer than its time limit.
    adapter: { type: echo, delayMs: 200 }
    limits: { runTimeoutSeconds: 0.3 }
  - name: tools
    version: 1.0.0
    description: A tool call with its result, then an answer.
    adapter:
      type: scripted
      script:
        - { type: RUN_STARTED, threadId: t, runId: r }
        - { type: STEP_STARTED, stepName: call }
        - { type: TOOL_CALL_START, toolCallId: c1, toolCallName: lookup, parentMessageId: m-1 }
        - { type: TOOL_CALL_ARGS, toolCallId: c1, delta: '{"q":1}' }
        - { type: TOOL_CALL_END, toolCallId: c1 }
        - { type: TOOL_CALL_RESULT, messageId: t-1, toolCallId: c1, content: found }
        - { type: STEP_FINISHED, stepName: call }
        - { type: TEXT_MESSAGE_CHUNK, messageId: m-2, role: assistant, delta: done }
        - { type: STATE_DELTA, delta: [{ op: add, path: /looked, value: true }] }
        - { type: RUN_FINISHED, threadId: t, runId: r, result: { ok: true } }
  - name: fails
    version: 1.0.0
    description: Fails with its own error.
    adapter:
      type: scripted
      script:
        - { type: RUN_STARTED, threadId: t, runId: r }
        - { type: RUN_ERROR, message: model overloaded, code: RATE_LIMIT, threadId: t, runId: r }
`;

const validEvent = aguiValidator("Event");

/** The events of an AG-UI response body, decoded as the content type says. */
function decodeBody(contentType: string, body: Uint8Array): Array<Record<string, unknown>> {
  if (contentType.startsWith(PROTO)) {
    const events: Array<Record<string, unknown>> = [];
    let offset = 0;
    while (offset < body.length) {
      const length = new DataView(body.buffer, body.byteOffset + offset, 4).getUint32(0, false);
      events.push(decode(body.subarray(offset + 4, offset + 4 + length)) as never);
      offset += 4 + length;
    }
    return events;
  }
  const events: Array<Record<string, unknown>> = [];
  const parser = createParser({ onEvent: (message) => events.push(JSON.parse(message.data)) });
  parser.feed(new TextDecoder().decode(body));
  return events;
}

/** Every event must validate; the message names the event and what is wrong with it. */
function expectSchemaValid(events: Array<Record<string, unknown>>): void {
  expect(events.length).toBeGreaterThan(0);
  for (const [index, event] of events.entries()) {
    const valid = validEvent(event);
    expect(
      valid,
      `event ${index} ${JSON.stringify(event)}: ${describeErrors(validEvent.errors, "event")}`,
    ).toBe(true);
  }
}

describe("the AG-UI face's events validate against the bundled schema", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("the validators used here refuse what RUN_ERROR does not describe (the objects are closed)", () => {
    expect(validEvent({ type: "RUN_ERROR", message: "x", code: "499" })).toBe(true);
    expect(validEvent({ type: "RUN_ERROR", message: "x", threadId: "t", runId: "r" })).toBe(false);
    expect(describeErrors(validEvent.errors, "event")).toContain("threadId");
  });

  /** Posts a RunAgentInput to the face; `whileRunning` runs once the response has begun. */
  async function serve(
    agent: string,
    accept: string,
    input: Record<string, unknown>,
    whileRunning?: (acpRunId: string) => Promise<void>,
  ) {
    const response = await fetch(`${base}/ag-ui/${agent}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept },
      body: JSON.stringify({ tools: [], context: [], ...input }),
    });
    expect(response.status).toBe(200);
    const contentType = response.headers.get("content-type") ?? "";
    expect(contentType.startsWith(PROTO)).toBe(accept === PROTO);
    if (whileRunning) await whileRunning(response.headers.get("x-acp-run-id")!);
    const events = decodeBody(contentType, new Uint8Array(await response.arrayBuffer()));
    expectSchemaValid(events);
    return events;
  }

  const userSays = (content: string) => [{ id: `u-${Math.random()}`, role: "user", content }];
  const types = (events: Array<Record<string, unknown>>) => events.map((e) => e.type);

  describe.each([
    ["SSE", "text/event-stream"],
    ["protobuf", PROTO],
  ])("over %s", (_transport, accept) => {
    it("a run that succeeds (text, state)", async () => {
      const events = await serve("echo", accept, {
        threadId: `ok-${Math.random()}`,
        runId: "run-ok",
        messages: userSays("hello"),
      });
      expect(events.at(0)).toMatchObject({ type: "RUN_STARTED", runId: "run-ok" });
      expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", runId: "run-ok" });
    });

    it("a run with a tool call, its result and a step", async () => {
      const events = await serve("tools", accept, {
        threadId: `tools-${Math.random()}`,
        runId: "run-tools",
        messages: userSays("look it up"),
      });
      expect(types(events)).toContain("TOOL_CALL_RESULT");
    });

    it("a run the agent fails with RUN_ERROR (its ids stripped)", async () => {
      const events = await serve("fails", accept, {
        threadId: `fails-${Math.random()}`,
        runId: "run-fails",
        messages: userSays("try"),
      });
      expect(events.at(-1)).toEqual({
        type: "RUN_ERROR",
        message: "model overloaded",
        code: "RATE_LIMIT",
      });
    });

    it("a run that interrupts, and the run that resumes it", async () => {
      const threadId = `hitl-${Math.random()}`;
      const asked = await serve("echo", accept, {
        threadId,
        runId: "run-ask",
        messages: userSays("/approve ship it"),
      });
      const outcome = asked.at(-1)!.outcome as { type: string; interrupts: Array<{ id: string }> };
      expect(outcome.type).toBe("interrupt");
      const resumed = await serve("echo", accept, {
        threadId,
        runId: "run-resume",
        messages: [],
        resume: [{ interruptId: outcome.interrupts[0]!.id, status: "resolved", payload: {} }],
      });
      expect(resumed.at(-1)).toMatchObject({ type: "RUN_FINISHED", runId: "run-resume" });
    });

    it("a run cancelled through ACP: the face's own RUN_ERROR", async () => {
      const threadId = `cancel-${Math.random()}`;
      const events = await serve(
        "slow",
        accept,
        { threadId, runId: "run-cancel", messages: userSays("a b c d e f g h i j") },
        async (acpRunId) => {
          const res = await t.call(
            "POST",
            `/threads/${aclThreadId(threadId)}/runs/${acpRunId}/cancel?action=interrupt&wait=true`,
          );
          expect(res.status).toBe(204);
        },
      );
      expect(events.at(-1)).toEqual({
        type: "RUN_ERROR",
        message: "run was cancelled",
        code: "499",
      });
    });

    it("a run that runs out of time: the face's own RUN_ERROR", async () => {
      const events = await serve("brief", accept, {
        threadId: `brief-${Math.random()}`,
        runId: "run-brief",
        messages: userSays("a b c d e f g h i j"),
      });
      expect(events.at(-1)).toMatchObject({ type: "RUN_ERROR" });
      expect(Object.keys(events.at(-1)!).sort()).toEqual(["code", "message", "type"]);
    });
  });

  it("@ag-ui/client's HttpAgent strips nothing from a failed or cancelled run", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const failing = new HttpAgent({ url: `${base}/ag-ui/fails`, threadId: `f-${Math.random()}` });
      failing.addMessage({ id: "u", role: "user", content: "try" });
      await failing.runAgent().catch(() => undefined);

      const slow = new HttpAgent({ url: `${base}/ag-ui/brief`, threadId: `b-${Math.random()}` });
      slow.addMessage({ id: "u", role: "user", content: "a b c d e f g h i j" });
      await slow.runAgent().catch(() => undefined);

      const enforced = warn.mock.calls
        .map((call) => String(call[0]))
        .filter((m) => /enforce/.test(m));
      expect(enforced).toEqual([]);
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });
});

/**
 * Streams that @ag-ui/client accepts from real agents, run in-process as `module` agents:
 * LangGraphAgent's own run id on RUN_FINISHED, and events it keeps sending after RUN_ERROR.
 */
import { resolve } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readUpdate } from "../../src/engine/frames/codec.js";
import type { TestApp } from "../helpers/app.js";
import { build } from "../helpers/app.js";
import { agentId, type Json, newThread, post, userSays } from "./helpers.js";

const FIXTURE = resolve(import.meta.dirname, "../fixtures/modules/langgraph-like-agents.mjs");

const config = JSON.stringify({
  agents: ["OwnRunIdAgent", "ErrorThenMoreAgent"].map((name) => ({
    name,
    version: "1.0.0",
    description: `test agent ${name}`,
    adapter: { type: "module", path: FIXTURE, export: name },
  })),
});

describe("module agents that behave as LangGraphAgent does", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build({ yaml: config });
  });
  afterAll(() => t.close());

  async function runToEnd(agent: string) {
    const threadId = await newThread(t);
    const waited = await post(t, `/threads/${threadId}/runs/wait`, {
      agent_id: agentId(agent),
      input: userSays("hi"),
    });
    const run = waited.run as Json;
    const frames = await t.storage.readFrames(run.run_id as string, 0);
    const events = frames
      .filter((frame) => frame.mode === "custom")
      .map((frame) => readUpdate(frame) as Json);
    const stored = await t.storage.getRun(run.run_id as string);
    return { threadId, run, output: waited.output as Json, events, stored: stored! };
  }

  it("a RUN_FINISHED naming the agent's own run id ends the run as success, with the run's id", async () => {
    const { run, output, events, stored } = await runToEnd("OwnRunIdAgent");
    expect(run.status).toBe("success");
    expect(output.type).toBe("result");
    const aguiRunId = stored.segments[0]!.agui_run_id;
    expect(events.at(-1)).toEqual({
      type: "RUN_FINISHED",
      threadId: run.thread_id,
      runId: aguiRunId,
    });
  });

  it("events after RUN_ERROR are dropped and the run fails with the agent's own message", async () => {
    const { run, output, events, threadId } = await runToEnd("ErrorThenMoreAgent");
    expect(run.status).toBe("error");
    expect(output.description).toBe(
      "Recursion limit of 25 reached without hitting a stop condition. You can increase the limit by setting the `recursion_limit` config key. (code GRAPH_RECURSION_LIMIT)",
    );
    expect(events.map((e) => e.type)).toEqual(["RUN_STARTED", "STEP_STARTED", "RUN_ERROR"]);
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread.values).not.toEqual({ after: "error" });
  });
});

describe("module agents that behave as LangGraphAgent does › what is logged", () => {
  it("one warning for the mapped ids and one counting the events dropped after RUN_ERROR", async () => {
    const lines: Json[] = [];
    const logger = pino(
      { level: "warn" },
      { write: (line: string) => lines.push(JSON.parse(line) as Json) },
    );
    const t = await build({ yaml: config, logger });
    try {
      for (const agent of ["OwnRunIdAgent", "ErrorThenMoreAgent"]) {
        const threadId = await newThread(t);
        await post(t, `/threads/${threadId}/runs/wait`, {
          agent_id: agentId(agent),
          input: userSays("hi"),
        });
      }
    } finally {
      await t.close();
    }
    const messages = lines.map((line) => String(line.msg));
    expect(messages.filter((m) => m.includes("mapped to the run in progress"))).toEqual([
      expect.stringMatching(
        /^event 4 \(RUN_FINISHED\): RUN_FINISHED names thread '[^']+' run '1f0a-langgraph-own-run-id', but the run in progress is thread/,
      ),
    ]);
    expect(messages.filter((m) => m.includes("after its RUN_ERROR"))).toEqual([
      expect.stringMatching(
        /^event 3 \(STEP_FINISHED\): dropped 3 events \(STEP_FINISHED, STATE_SNAPSHOT, RUN_FINISHED\)/,
      ),
    ]);
  });
});

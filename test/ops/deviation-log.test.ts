import { resolve } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { parseConfig } from "../../src/config/load.js";
import { AgentRegistry, agentIdFor } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS, mergeSettings } from "../../src/config/settings.js";
import { createStorage } from "../../src/storage/index.js";
import { createLogger } from "../../src/util/logging.js";

/** CopilotKit's BuiltInAgent's quirk: `finishReason` on RUN_FINISHED, which AG-UI does not describe. */
const withFinishReason = [
  { type: "RUN_STARTED" },
  { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
  { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "hi" },
  { type: "TEXT_MESSAGE_END", messageId: "m1" },
  { type: "RUN_FINISHED", finishReason: "stop" },
];

/** An agent that, as LangGraph's does, puts a run id of its own on RUN_FINISHED. */
const langgraphLike = resolve(import.meta.dirname, "../fixtures/modules/langgraph-like-agents.mjs");

function memoryLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger("info", destination), lines };
}

describe("an agent's handled deviation", () => {
  it("is warned about once per agent in a thousand runs, its repeats counted at the end and each one in the metrics", async () => {
    const { logger, lines } = memoryLogger();
    const agent = (name: string) => ({
      name,
      version: "1.0.0",
      description: "finishes its runs with a finishReason",
      adapter: { type: "scripted", script: withFinishReason },
    });
    const config = await parseConfig(
      JSON.stringify({ agents: [agent("quirky"), agent("also-quirky")] }),
      { filename: "deviations.json" },
    );
    const storage = createStorage(":memory:");
    await storage.open();
    const app = await buildApp({
      settings: mergeSettings(DEFAULT_SETTINGS, config.server),
      registry: new AgentRegistry(config),
      storage,
      logger,
    });
    const wait = async (name: string) => {
      const reply = await app.inject({
        method: "POST",
        url: "/runs/wait",
        payload: { agent_id: agentIdFor(name, "1.0.0"), input: {} },
      });
      expect(reply.statusCode).toBe(200);
      expect(JSON.parse(reply.body).run.status).toBe("success");
    };
    try {
      for (let batch = 0; batch < 40; batch++) {
        await Promise.all(Array.from({ length: 25 }, () => wait("quirky")));
      }
      await wait("also-quirky");
      // The metric keeps every one: the log says it once.
      const metrics = await app.inject({ method: "GET", url: "/metrics" });
      expect(metrics.body).toContain('acp_agui_deviations_total{agent="quirky"} 1000');
      expect(metrics.body).toContain('acp_agui_deviations_total{agent="also-quirky"} 1');
    } finally {
      await app.close();
      await storage.close();
    }

    const stripped = lines.filter(
      (line) =>
        line.repeats === undefined &&
        String(line.msg).includes("removed unrecognised material at /finishReason"),
    );
    expect(stripped.map((line) => line.agent).sort()).toEqual(["also-quirky", "quirky"]);
    expect(stripped[0]).toMatchObject({ level: 40, eventType: "RUN_FINISHED" });
    expect(typeof stripped[0]!.run_id).toBe("string");

    const summaries = lines.filter((line) => typeof line.repeats === "number");
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({
      level: 40,
      agent: "quirky",
      repeats: 999,
      deviation: "RUN_FINISHED: removed unrecognised material at /finishReason",
    });
    expect(String(summaries[0]!.msg)).toContain("seen 999 more times");
  }, 120_000);
  it("is one kind whatever ids it names: an agent's own run id, in a hundred runs, is warned about once", async () => {
    const { logger, lines } = memoryLogger();
    const config = await parseConfig(
      JSON.stringify({
        agents: [
          {
            name: "own-ids",
            version: "1.0.0",
            description: "puts a run id of its own on RUN_FINISHED",
            adapter: { type: "module", path: langgraphLike, export: "OwnRunIdAgent" },
          },
        ],
      }),
      { filename: "own-ids.json" },
    );
    const storage = createStorage(":memory:");
    await storage.open();
    const app = await buildApp({
      settings: mergeSettings(DEFAULT_SETTINGS, config.server),
      registry: new AgentRegistry(config),
      storage,
      logger,
    });
    try {
      for (let batch = 0; batch < 4; batch++) {
        await Promise.all(
          Array.from({ length: 25 }, async () => {
            const reply = await app.inject({
              method: "POST",
              url: "/runs/wait",
              payload: { agent_id: agentIdFor("own-ids", "1.0.0"), input: {} },
            });
            expect(JSON.parse(reply.body).run.status).toBe("success");
          }),
        );
      }
    } finally {
      await app.close();
      await storage.close();
    }
    const mapped = lines.filter((line) =>
      String(line.msg).includes("mapped to the run in progress"),
    );
    expect(mapped).toHaveLength(2);
    expect(mapped[0]).toMatchObject({ level: 40, agent: "own-ids" });
    expect(mapped[1]).toMatchObject({ agent: "own-ids", repeats: 99 });
    expect(String(mapped[1]!.deviation)).toContain("names thread '…' run '…'");
  }, 120_000);
});

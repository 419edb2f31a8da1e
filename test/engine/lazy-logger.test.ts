import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { AgentDeviations } from "../../src/engine/agent-deviations.js";
import { lazyChild } from "../../src/engine/run-engine/lazy-logger.js";
import { createLogger } from "../../src/util/logging.js";

function memoryLogger(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger(level, destination), lines };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("lazyChild", () => {
  it("logs with its bindings, as the child it stands for", async () => {
    const { logger, lines } = memoryLogger("info");
    const log = lazyChild(logger, { run_id: "run-1", agent: "echo" });
    log.warn({ extra: 1 }, "first");
    log.info("second");
    log.child({ segment: 0 }).error("nested");
    await tick();
    expect(lines.map((l) => [l.msg, l.run_id, l.agent])).toEqual([
      ["first", "run-1", "echo"],
      ["second", "run-1", "echo"],
      ["nested", "run-1", "echo"],
    ]);
    expect(lines[0]!.extra).toBe(1);
    expect(lines[2]!.segment).toBe(0);
    expect(log.bindings()).toMatchObject({ run_id: "run-1", agent: "echo" });
  });

  it("leaves out the levels the parent does not log, also after the level changes", async () => {
    const { logger, lines } = memoryLogger("warn");
    const log = lazyChild(logger, { run_id: "run-2" });
    log.debug("hidden");
    log.info("hidden too");
    expect(log.isLevelEnabled("info")).toBe(false);
    logger.level = "debug";
    log.debug("shown");
    await tick();
    expect(lines.map((l) => [l.msg, l.run_id])).toEqual([["shown", "run-2"]]);
  });

  it("redacts its bindings as a pino child does", async () => {
    const { logger, lines } = memoryLogger("info");
    const direct = logger.child({ headers: { authorization: "Bearer secret" } });
    const lazy = lazyChild(logger, { headers: { authorization: "Bearer secret" } });
    direct.info("direct");
    lazy.info("lazy");
    await tick();
    expect(lines[1]!.headers).toEqual(lines[0]!.headers);
  });

  it("can be watched for agent deviations", async () => {
    const { logger, lines } = memoryLogger("info");
    const deviations = new AgentDeviations(logger, 60_000);
    for (let run = 0; run < 3; run++) {
      const log = deviations.watch("a", lazyChild(logger, { run_id: `run-${run}` }));
      log.warn({ deviation: "stripped /x" }, `run ${run}: stripped /x`);
    }
    deviations.summarize();
    await tick();
    expect(lines.map((l) => [l.msg, l.run_id, l.repeats])).toEqual([
      ["run 0: stripped /x", "run-0", undefined],
      ["agent a: stripped /x — seen 2 more times", undefined, 2],
    ]);
  });
});

import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { AgentDeviations } from "../../src/engine/agent-deviations.js";
import { createLogger } from "../../src/util/logging.js";
import { until } from "../runs/helpers.js";

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

describe("AgentDeviations", () => {
  it("warns once per agent and kind, passes other warnings through, and sums up repeats on its timer", async () => {
    const { logger, lines } = memoryLogger();
    const deviations = new AgentDeviations(logger, 50);
    deviations.start();
    try {
      for (let run = 0; run < 5; run++) {
        const a = deviations.watch("a", logger.child({ agent: "a", run_id: `run-${run}` }));
        a.warn({ deviation: "stripped /x" }, `run ${run}: stripped /x`);
        a.warn({ deviation: "stripped /y" }, `run ${run}: stripped /y`);
        a.warn(`run ${run}: not a deviation`);
      }
      const b = deviations.watch("b", logger.child({ agent: "b" }));
      b.warn({ deviation: "stripped /x" }, "b: stripped /x");
      await new Promise((resolve) => setImmediate(resolve));

      const warned = lines.filter((l) => l.repeats === undefined).map((l) => l.msg);
      expect(warned.filter((m) => String(m).endsWith("stripped /x"))).toEqual([
        "run 0: stripped /x",
        "b: stripped /x",
      ]);
      expect(warned.filter((m) => String(m).endsWith("stripped /y"))).toEqual([
        "run 0: stripped /y",
      ]);
      expect(warned.filter((m) => String(m).endsWith("not a deviation"))).toHaveLength(5);

      const summaries = await until(
        async () => lines.filter((l) => l.repeats !== undefined),
        (found) => found.length === 2,
      );
      expect(summaries).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ agent: "a", deviation: "stripped /x", repeats: 4 }),
          expect.objectContaining({ agent: "a", deviation: "stripped /y", repeats: 4 }),
        ]),
      );

      // Counting starts anew after a summary; a kind with no repeats since says nothing.
      deviations.watch("a", logger.child({ agent: "a" })).warn({ deviation: "stripped /x" }, "x");
    } finally {
      deviations.stop();
    }
    const last = lines.filter((l) => l.repeats !== undefined).slice(2);
    expect(last).toEqual([
      expect.objectContaining({ agent: "a", deviation: "stripped /x", repeats: 1 }),
    ]);
    expect(String(last[0]!.msg)).toBe("agent a: stripped /x — seen 1 more time");
  });
});

/**
 * In-process (`module`) agents whose events or state are too large, too deep or not JSON:
 * each run ends as `error` naming the event, the rule and the limit's key, never with a
 * JavaScript exception's text, and a state that stays small however often it is patched runs
 * to its end.
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import type { TestApp } from "../helpers/app.js";
import { buildServing, echoAgent } from "./helpers.js";

const fixture = resolve(import.meta.dirname, "../fixtures/misbehaving/oversized.mjs");
const MiB = 1024 * 1024;

const expected: Record<string, RegExp> = {
  hugeEvent:
    /^event 1 \(CUSTOM\): the event is larger than 1048576 bytes as JSON, the most one event may be \(server\.limits\.maxEventBytes\)$/,
  deepValue:
    /^event 1 \(CUSTOM\): the event is nested deeper than 256 levels, at \/value\/a\/a\/a.*\(server\.limits\.maxEventDepth\)$/,
  cyclic:
    /^event 1 \(CUSTOM\): the event is nested deeper than 256 levels, at \/value\/self\/self.*\(server\.limits\.maxEventDepth\)$/,
  bigint: /^event 1 \(CUSTOM\): the event cannot be written as JSON: .*BigInt/,
  deepPatches:
    /^event \d+ \(STATE_DELTA\): the patch makes the state nested deeper than 256 levels, at \/a\/a.*\(server\.limits\.maxEventDepth\)$/,
  growingState:
    /^event \d+ \(STATE_DELTA\): the patched state would be larger than 4 MiB as JSON, the most a run's state may be \(limits\.maxStateBytes\)$/,
  endlessText:
    /^event 18 \(TEXT_MESSAGE_CONTENT\): the messages this run added would be larger than 4 MiB as JSON, the most a run's state may be \(limits\.maxStateBytes\)$/,
};

interface WaitBody {
  run: { status: string };
  output?: { type: string; errcode?: number; description?: string };
}

describe("in-process agents past the bounds", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildServing({
      server: { limits: { maxEventBytes: MiB } },
      agents: [
        echoAgent("good"),
        ...[...Object.keys(expected), "rewritesState"].map((name) => ({
          name,
          version: "1.0.0",
          description: `misbehaves: ${name}`,
          adapter: { type: "module", path: fixture, export: name },
          limits: { maxStateBytes: 4 * MiB },
        })),
      ],
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  const waitRun = async (agent: string): Promise<WaitBody> => {
    const res = await t.call("POST", "/runs/wait", {
      agent_id: agentIdFor(agent, "1.0.0"),
      input: { messages: [{ role: "user", content: "hi" }] },
      on_completion: "keep",
    });
    expect(res.status, res.raw).toBe(200);
    return res.body as WaitBody;
  };

  for (const [name, description] of Object.entries(expected)) {
    it(`${name}: the run fails naming the event, the rule and the limit`, async () => {
      const { run, output } = await waitRun(name);
      expect(run.status).toBe("error");
      expect(output?.errcode).toBe(502);
      expect(output?.description).toMatch(description);
      expect((await waitRun("good")).run.status).toBe("success");
    });
  }

  it("a state patched often but kept small runs to its end", async () => {
    const { run } = await waitRun("rewritesState");
    expect(run.status).toBe("success");
  });
});

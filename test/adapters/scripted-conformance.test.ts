/**
 * The AG-UI conformance corpus end to end: each fixture is registered as a `scripted` agent
 * (its file as the script), run through ACP on a thread of its own with the fixture's input,
 * and held to its verdict through what an ACP client sees: the run's status and output, and
 * the thread's values and messages afterwards. Fixtures that pin client-side downgrade shims
 * are inapplicable for the reasons recorded in test/helpers/corpus.ts.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aguiToAcpMessage } from "../../src/bridge/acp/messages.js";
import { build, type TestApp } from "../helpers/app.js";
import {
  corpusDir,
  ERROR_KEYWORDS,
  expectationFor,
  type Fixture,
  fixtures,
  INAPPLICABLE,
  messagesMatch,
  subsetMatches,
} from "../helpers/corpus.js";

const applicable = fixtures.filter((f) => INAPPLICABLE[f.name] === undefined);

const yaml = `agents:\n${applicable
  .map(
    (f) => `  - name: ${f.name}
    version: 1.0.0
    description: conformance fixture ${f.name}
    adapter: { type: scripted, script: ${JSON.stringify(path.join(corpusDir, f.file))} }`,
  )
  .join("\n")}\n`;

/** The ACP status a conforming stream ends in: decided by its last terminal event. */
function expectedStatus(fixture: Fixture): string {
  const terminals = fixture.stream.filter(
    (e) => e.type === "RUN_FINISHED" || e.type === "RUN_ERROR",
  );
  const last = terminals[terminals.length - 1];
  if (!last || last.type === "RUN_ERROR") return "error";
  const outcome = (last.outcome as { type?: string } | undefined)?.type;
  if (outcome === "interrupt") return "interrupted";
  if (outcome === "cancelled") return "error";
  return "success";
}

type Run = { run_id: string; status: string };
type Output = { type: string; description?: string; values?: unknown; messages?: unknown[] };
type Thread = { values: unknown; messages: unknown[] };

describe("AG-UI conformance corpus through the scripted adapter and ACP", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build({ yaml });
  });
  afterAll(() => t.close());

  it.each(applicable.map((f) => [f.name, f]))("%s", async (name, fixture) => {
    const want = expectationFor(fixture);
    const agent = t.registry.getByName(name)!;
    const thread = (await t.call("POST", "/threads", {})).body as { thread_id: string };
    const input: Record<string, unknown> = {};
    if (fixture.input?.messages) input.messages = fixture.input.messages;

    const res = await t.call("POST", `/threads/${thread.thread_id}/runs/wait`, {
      agent_id: agent.agentId,
      input,
    });
    expect(res.status).toBe(200);
    const { run, output } = res.body as { run: Run; output: Output };

    if (want.outcome === "failed") {
      expect(run.status).toBe("error");
      expect(output.type).toBe("error");
      const keywords = ERROR_KEYWORDS[name] ?? (want.errorContains ? [want.errorContains] : []);
      for (const keyword of keywords) expect(output.description).toContain(keyword);
      return;
    }
    expect(run.status, JSON.stringify(output)).toBe(expectedStatus(fixture));
    // A RUN_ERROR that ends the stream is the run's error; one followed by another run is not.
    if (want.runError !== undefined && run.status === "error") {
      expect(output.description).toContain(want.runError);
    }

    const state = (await t.call("GET", `/threads/${thread.thread_id}`)).body as Thread;
    if (Object.hasOwn(want, "state")) {
      const values =
        want.state !== null && typeof want.state === "object" && !Array.isArray(want.state)
          ? want.state
          : { $state: want.state };
      expect(subsetMatches(values, state.values), JSON.stringify(state.values)).toBe(true);
    }
    const produced = state.messages.slice((fixture.input?.messages ?? []).length);
    if (want.messageCount !== undefined) {
      expect(state.messages.length, JSON.stringify(state.messages)).toBe(want.messageCount);
    }
    if (want.messages !== undefined) {
      // ACP content is a string or a block list: compare against the ACP form of each message.
      const acpForm = want.messages.map((m) =>
        m.role === "activity" ? aguiToAcpMessage(m as never) : m,
      );
      expect(messagesMatch(acpForm, state.messages), JSON.stringify(produced)).toBe(true);
    }
  });
});

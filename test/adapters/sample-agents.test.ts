import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";

type Wait = {
  run: { status: string };
  output: { values: Record<string, unknown>; messages: Array<{ content: unknown }> };
};

describe("the sample config's agents", () => {
  let t: TestApp;
  beforeAll(async () => {
    ({ t } = await sampleServer());
  });
  afterAll(async () => {
    await t.close();
  });

  const run = async (name: string, content: string) => {
    const res = await t.call("POST", "/runs/wait", {
      agent_id: t.registry.getByName(name)!.agentId,
      input: { messages: [{ role: "user", content }] },
    });
    expect(res.status).toBe(200);
    return res.body as Wait;
  };

  it("word-count (module adapter) counts words in process", async () => {
    const { run: r, output } = await run("word-count", "one two three");
    expect(r.status).toBe("success");
    expect(output.values).toEqual({ last_count: 3, total_words: 3 });
    expect(output.messages.at(-1)!.content).toBe("3 words (3 so far).");
  });

  it("remote-echo (agui-http adapter) reaches an AG-UI endpoint over HTTP", async () => {
    const { run: r, output } = await run("remote-echo", "over the wire");
    expect(r.status, JSON.stringify(output)).toBe("success");
    expect(output.messages.at(-1)!.content).toBe("over the wire");
    expect(output.values).toMatchObject({ turns: 1, last_message: "over the wire" });
  });

  it.each(["echo", "scripted-demo"])("%s finishes with success", async (name) => {
    expect((await run(name, "hi")).run.status).toBe("success");
  });

  it("approval-demo stops for approval and finishes when resumed", async () => {
    const agentId = t.registry.getByName("approval-demo")!.agentId;
    const thread = (await t.call("POST", "/threads", {})).body as { thread_id: string };
    const waited = (
      await t.call("POST", `/threads/${thread.thread_id}/runs/wait`, {
        agent_id: agentId,
        input: {},
      })
    ).body as { run: { run_id: string; status: string } };
    expect(waited.run.status).toBe("interrupted");
    const resumed = await t.call("POST", `/threads/${thread.thread_id}/runs/${waited.run.run_id}`, {
      approval: { approved: true },
    });
    expect(resumed.status).toBe(200);
    const done = (
      await t.call("GET", `/threads/${thread.thread_id}/runs/${waited.run.run_id}/wait`)
    ).body as Wait;
    expect(done.run.status).toBe("success");
    expect(done.output.values).toMatchObject({ status: "done" });
  });

  it.each([
    [true, 'Approved with {"approved":true}: drop the table', true],
    [false, 'Not approved, so not echoed: "drop the table"', false],
  ])(
    "echo's /approve answered approved: %s › says so, and nothing stays pending",
    async (approved, says, state) => {
      const agentId = t.registry.getByName("echo")!.agentId;
      const thread = (await t.call("POST", "/threads", {})).body as { thread_id: string };
      const asked = (
        await t.call("POST", `/threads/${thread.thread_id}/runs/wait`, {
          agent_id: agentId,
          input: { messages: [{ role: "user", content: "/approve drop the table" }] },
        })
      ).body as { run: { run_id: string; status: string }; output: Wait["output"] };
      expect(asked.run.status).toBe("interrupted");
      const pending = (await t.call("GET", `/threads/${thread.thread_id}`)).body as {
        values: Record<string, unknown>;
      };
      expect(pending.values).toMatchObject({ pending_approval: true });
      await t.call("POST", `/threads/${thread.thread_id}/runs/${asked.run.run_id}`, {
        approval: { approved },
      });
      const done = (
        await t.call("GET", `/threads/${thread.thread_id}/runs/${asked.run.run_id}/wait`)
      ).body as Wait;
      expect(done.output.messages.at(-1)!.content).toBe(says);
      expect(done.output.values).toMatchObject({ approved: state });
      expect(done.output.values).not.toHaveProperty("pending_approval");
    },
  );
});

/**
 * Every demo agent of config/sample.yaml through @ag-ui/client's HttpAgent, on one server as
 * `npm start` runs it: the remote AG-UI agent is this same server's AG-UI face, reached over HTTP
 * while the outer run holds its own thread.
 */
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";

const textOf = (messages: unknown[]) =>
  messages
    .filter((m) => (m as { role: string }).role === "assistant")
    .map((m) => (m as { content?: string }).content);

describe("the sample config's agents over AG-UI, one server", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer());
  });
  afterAll(() => t.close());

  const agent = (name: string) =>
    new HttpAgent({ url: `${base}/ag-ui/${name}`, threadId: randomUUID() });

  it.each([
    ["echo", "hello there", "hello there"],
    ["remote-echo", "over the wire", "over the wire"],
    ["word-count", "one two three", "3 words (3 so far)."],
  ])("%s answers, and a second turn on the same thread too", async (name, said, answer) => {
    const client = agent(name);
    client.addMessage({ id: randomUUID(), role: "user", content: said });
    const first = await client.runAgent();
    expect(textOf(first.newMessages)).toEqual([answer]);
    client.addMessage({ id: randomUUID(), role: "user", content: said });
    const second = await client.runAgent();
    expect(textOf(second.newMessages)).toHaveLength(1);
  });

  it("scripted-demo replays its run with its tool call", async () => {
    const { newMessages } = await agent("scripted-demo").runAgent();
    expect(newMessages.some((m) => m.role === "tool")).toBe(true);
  });

  it("approval-demo stops for approval", async () => {
    const client = agent("approval-demo");
    const { newMessages } = await client.runAgent();
    expect(textOf(newMessages)).toEqual(["Plan: 1) back up the database, 2) migrate it."]);
  });

  it("remote-echo on an ACP thread: two runs in a row, neither refused as busy", async () => {
    const agentId = t.registry.getByName("remote-echo")!.agentId;
    const thread = (await t.call("POST", "/threads", {})).body as { thread_id: string };
    for (const content of ["first", "second"]) {
      const res = await t.call("POST", `/threads/${thread.thread_id}/runs/wait`, {
        agent_id: agentId,
        input: { messages: [{ role: "user", content }] },
      });
      const body = res.body as { run: { status: string }; output: unknown };
      expect(body.run.status, JSON.stringify(body.output)).toBe("success");
    }
  });
});

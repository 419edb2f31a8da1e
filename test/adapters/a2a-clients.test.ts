/**
 * An A2A agent (built on the official SDK, on loopback) behind the `a2a` adapter, driven by the
 * AG-UI face with `@ag-ui/client`'s HttpAgent and by CopilotKit's routes with
 * `@copilotkit/core`; each test checks what the A2A agent itself received.
 */
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { aclThreadId } from "../../src/http/agui-runs/agui-runs.js";
import { type A2aTestAgent, startA2aAgent } from "../helpers/a2a-agents.js";
import { build, type TestApp } from "../helpers/app.js";
import { copilotClient, transcript, until } from "../helpers/copilotkit.js";
import { listen } from "../runs/helpers.js";

type Interrupt = { id: string; reason?: string; message?: string };

describe("an A2A agent through the AG-UI face and CopilotKit", () => {
  let remote: A2aTestAgent;
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    remote = await startA2aAgent();
    t = await build({
      yaml: `
agents:
  - name: remote
    version: 1.0.0
    description: An A2A agent.
    adapter: { type: a2a, url: ${remote.url} }
`,
      settings: { copilotkit: { enabled: true, basePath: "/copilotkit" } },
    });
    base = await listen(t);
  });
  afterAll(async () => {
    await t?.close();
    await remote?.close();
  });

  const since = (n: number) => remote.seen.slice(n);

  describe("@ag-ui/client HttpAgent on /ag-ui/remote", () => {
    const client = (name: string) =>
      new HttpAgent({ url: `${base}/ag-ui/remote`, threadId: `${name}-${randomUUID()}` });

    it("two turns on one thread › one A2A context, a task per turn, only the new message sent", async () => {
      const agent = client("turns");
      const before = remote.seen.length;
      agent.addMessage({ id: "u1", role: "user", content: "hello one" });
      await agent.runAgent();
      agent.addMessage({ id: "u2", role: "user", content: "hello two" });
      await agent.runAgent();
      expect(agent.messages.map((m) => [m.role, (m as { content?: unknown }).content])).toEqual([
        ["user", "hello one"],
        ["assistant", "echo: hello one"],
        ["user", "hello two"],
        ["assistant", "echo: hello two"],
      ]);
      const seen = since(before);
      expect(seen.map((s) => s.text)).toEqual(["hello one", "hello two"]);
      expect(seen.map((s) => s.contextId)).toEqual([
        aclThreadId(agent.threadId),
        aclThreadId(agent.threadId),
      ]);
      expect(seen[0]!.taskId).not.toBe(seen[1]!.taskId);
    });

    it("chunks and a data part › content deltas and the agent's state", async () => {
      const agent = client("chunks");
      agent.addMessage({ id: "c", role: "user", content: "chunks" });
      const deltas: string[] = [];
      await agent.runAgent(
        {},
        { onTextMessageContentEvent: ({ event }) => void deltas.push(event.delta) },
      );
      expect(deltas).toEqual(["one ", "two ", "three"]);
      agent.addMessage({ id: "d", role: "user", content: "data" });
      await agent.runAgent();
      expect(agent.state).toEqual({ answer: 42 });
      expect((agent.messages.at(-1) as { content?: string }).content).toBe(
        "the answer is attached",
      );
    });

    it("input-required › an interrupt; the resume continues the same A2A task", async () => {
      const agent = client("ask");
      const before = remote.seen.length;
      agent.addMessage({ id: "a", role: "user", content: "ask" });
      let interrupts: Interrupt[] = [];
      await agent.runAgent(
        {},
        {
          onRunFinishedEvent: ({ event }) => {
            const outcome = (event as { outcome?: { type: string; interrupts?: Interrupt[] } })
              .outcome;
            if (outcome?.type === "interrupt") interrupts = outcome.interrupts ?? [];
          },
        },
      );
      expect(interrupts).toHaveLength(1);
      expect(interrupts[0]).toMatchObject({
        reason: "input_required",
        message: "What is your name?",
      });
      const { newMessages } = await agent.runAgent({
        resume: [{ interruptId: interrupts[0]!.id, status: "resolved", payload: { text: "Ada" } }],
      });
      expect((newMessages.at(-1) as { content?: string }).content).toBe("Hello, Ada");
      const seen = since(before);
      expect(seen.map((s) => [s.text, s.continued])).toEqual([
        ["ask", false],
        ["Ada", true],
      ]);
      expect(seen[1]!.taskId).toBe(seen[0]!.taskId);
    });

    it("the client aborts › the A2A agent sees its task canceled", async () => {
      const agent = client("abort");
      const started = remote.started("wait");
      agent.addMessage({ id: "w", role: "user", content: "wait" });
      let text = "";
      const running = agent
        .runAgent(
          {},
          {
            onTextMessageContentEvent: ({ event }) => {
              text += event.delta;
            },
          },
        )
        .catch(() => undefined);
      const seen = await started;
      // Aborted once the adapter knows the task: the agent's "working on it" arrived.
      await until(() => text === "working on it", "the agent's working message");
      agent.abortRun();
      await running;
      await vi.waitFor(() => expect(remote.canceled).toContain(seen.taskId), { timeout: 5000 });
    });
  });

  describe("@copilotkit/core on /copilotkit", () => {
    it("discovers the agent with its card, and runs it: chunks arrive as one reply", async () => {
      const client = await copilotClient(`${base}/copilotkit`);
      const info = (await (await fetch(`${base}/copilotkit/info`)).json()) as {
        agents: Record<string, { capabilities: { custom?: { a2a?: { name: string } } } }>;
      };
      expect(info.agents.remote!.capabilities.custom?.a2a?.name).toBe("sdk-test-agent");
      const threadId = randomUUID();
      const agent = client.agent("remote", threadId);
      const before = remote.seen.length;
      agent.addMessage({ id: "k1", role: "user", content: "chunks" });
      await client.core.runAgent({ agent });
      expect(transcript(agent)).toEqual([
        ["user", "chunks"],
        ["assistant", "one two three"],
      ]);
      expect(client.errors).toEqual([]);
      expect(since(before).map((s) => [s.text, s.contextId])).toEqual([["chunks", threadId]]);
    });

    it("input-required › CopilotKit's interrupt, answered with resume on the same task", async () => {
      const client = await copilotClient(`${base}/copilotkit`);
      const threadId = randomUUID();
      const agent = client.agent("remote", threadId);
      const before = remote.seen.length;
      agent.addMessage({ id: "q1", role: "user", content: "ask" });
      await client.core.runAgent({ agent });
      const interrupts = (agent as unknown as { pendingInterrupts: Interrupt[] }).pendingInterrupts;
      expect(interrupts.map((i) => i.message)).toEqual(["What is your name?"]);
      await client.core.runAgent({
        agent,
        resume: [{ interruptId: interrupts[0]!.id, status: "resolved", payload: { text: "Cy" } }],
      });
      expect(transcript(agent).at(-1)).toEqual(["assistant", "Hello, Cy"]);
      const seen = since(before);
      expect(seen.map((s) => [s.text, s.continued, s.contextId])).toEqual([
        ["ask", false, threadId],
        ["Cy", true, threadId],
      ]);
      expect(seen[1]!.taskId).toBe(seen[0]!.taskId);
    });

    it("stop › the A2A agent sees its task canceled", async () => {
      const client = await copilotClient(`${base}/copilotkit`);
      const agent = client.agent("remote", randomUUID());
      const started = remote.started("wait");
      agent.addMessage({ id: "s1", role: "user", content: "wait" });
      const running = client.core.runAgent({ agent });
      const seen = await started;
      await until(
        () => transcript(agent).some(([, text]) => text === "working on it"),
        "the agent's working message",
      );
      client.core.stopAgent({ agent });
      await running;
      await vi.waitFor(() => expect(remote.canceled).toContain(seen.taskId), { timeout: 5000 });
      expect(client.errors).toEqual([]);
    });
  });
});

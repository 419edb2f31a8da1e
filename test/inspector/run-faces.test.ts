/**
 * Which face started each run, as the inspector's API tells it: a run made by each face's own
 * client (ACP over HTTP, @ag-ui/client, CopilotKit's @copilotkit/core, the A2A SDK) lists with
 * that face; the last run of each thread names the agent the thread talks to; a resumed
 * segment keeps the answers it was started with.
 */
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { aclThreadId } from "../../src/http/agui-runs/agui-runs.js";
import { a2aClient, asTask, userMessage } from "../a2a/helpers.js";
import { build, type TestApp } from "../helpers/app.js";
import { copilotClient } from "../helpers/copilotkit.js";
import { listen } from "../runs/helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: approval
    version: 1.0.0
    description: Stops for approval, then finishes.
    adapter:
      type: scripted
      segments:
        - - { type: RUN_STARTED, threadId: t, runId: r }
          - type: RUN_FINISHED
            threadId: t
            runId: r
            outcome:
              type: interrupt
              interrupts: [{ id: approve-1, reason: approval, message: Approve? }]
        - - { type: RUN_STARTED, threadId: t, runId: r }
          - { type: RUN_FINISHED, threadId: t, runId: r }
`;

interface ListedRun {
  run_id: string;
  thread_id?: string;
  agent_id: string;
  face: string | null;
  status: string;
  output: Record<string, unknown> | null;
  segments: Array<{ agui_run_id: string; resume?: unknown[] }>;
}

const ECHO = agentIdFor("echo", "1.0.0");
const APPROVAL = agentIdFor("approval", "1.0.0");

describe("the face a run came through", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML });
    base = await listen(t);
  });
  afterAll(() => t.close());

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${base}/ui/api${path}`);
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as T;
  };
  const facesOfThread = async (threadId: string) =>
    (await api<ListedRun[]>(`/runs?thread_id=${threadId}`)).map((run) => run.face);

  it("is recorded by each face's own client and listed with the run", async () => {
    // ACP: a thread run and a stateless run, over plain HTTP as any ACP client sends them.
    const acpThread = randomUUID();
    const created = await fetch(`${base}/threads/${acpThread}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        agent_id: ECHO,
        if_not_exists: "create",
        input: { messages: [{ role: "user", content: "over ACP" }] },
      }),
    });
    expect(created.status).toBe(200);
    expect(await facesOfThread(acpThread)).toEqual(["acp"]);

    // AG-UI: @ag-ui/client's HttpAgent.
    const aguiThread = `agui-${randomUUID()}`;
    const agent = new HttpAgent({ url: `${base}/ag-ui/echo`, threadId: aguiThread });
    agent.addMessage({ id: randomUUID(), role: "user", content: "over AG-UI" });
    await agent.runAgent();
    expect(await facesOfThread(aclThreadId(aguiThread))).toEqual(["agui"]);

    // CopilotKit: its own client with runtimeUrl pointed at /copilotkit.
    const client = await copilotClient(`${base}/copilotkit`);
    const copilotThread = randomUUID();
    const copilot = client.agent("echo", copilotThread);
    copilot.addMessage({ id: randomUUID(), role: "user", content: "over CopilotKit" });
    await client.core.runAgent({ agent: copilot });
    expect(client.errors).toEqual([]);
    expect(await facesOfThread(aclThreadId(copilotThread))).toEqual(["copilotkit"]);

    // A2A: the official SDK's client.
    const a2a = await a2aClient(base, "echo", "JSONRPC");
    const task = asTask(await a2a.sendMessage({ message: userMessage("over A2A") } as never));
    const byTask = await api<{ run: ListedRun }>(`/runs/${task.id}/frames?limit=1`);
    expect(byTask.run.face).toBe("a2a");

    // The list of recent runs says it too, and lists no run's values or messages.
    const recent = await api<ListedRun[]>(`/runs?agent_id=${ECHO}`);
    expect(recent.map((run) => run.face).sort()).toEqual(["a2a", "acp", "agui", "copilotkit"]);
    for (const run of recent) expect(run.output).toEqual({ type: "result" });
  });

  it("is null for a run stored without one, as runs from before it was recorded", async () => {
    const thread = randomUUID();
    await t.storage.createThread({ thread_id: thread, metadata: {}, if_exists: "raise" });
    await t.storage.insertRun(
      {
        run_id: randomUUID(),
        thread_id: thread,
        agent_id: ECHO,
        kind: "stateful",
        creation: { agent_id: ECHO },
        metadata: {},
        start_after: "2999-01-01T00:00:00.000Z",
      },
      { reject_if_busy: false },
    );
    expect(await facesOfThread(thread)).toEqual([null]);
  });

  it("names the agent of each thread's last run, for a page of threads at once", async () => {
    const echoThread = randomUUID();
    const approvalThread = randomUUID();
    const idle = randomUUID();
    for (const [thread, agentId] of [
      [echoThread, ECHO],
      [approvalThread, APPROVAL],
    ] as const) {
      const response = await fetch(`${base}/threads/${thread}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          agent_id: agentId,
          if_not_exists: "create",
          input: { messages: [{ role: "user", content: "hi" }] },
        }),
      });
      expect(response.status).toBe(200);
    }
    await fetch(`${base}/threads`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ thread_id: idle }),
    });
    const last = await api<Record<string, ListedRun | null>>(
      `/threads/last-runs?thread_ids=${echoThread},${approvalThread.toUpperCase()},${idle}`,
    );
    expect(Object.keys(last).sort()).toEqual([echoThread, approvalThread, idle].sort());
    expect(last[echoThread]?.agent_id).toBe(ECHO);
    expect(last[approvalThread]?.agent_id).toBe(APPROVAL);
    expect(last[idle]).toBeNull();
    const refused = await fetch(`${base}/ui/api/threads/last-runs?thread_ids=not-a-thread`);
    expect(refused.status).toBe(422);
  });

  it("keeps a resume's answers with the segment they started", async () => {
    const thread = randomUUID();
    const response = await fetch(`${base}/threads/${thread}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ agent_id: APPROVAL, if_not_exists: "create", input: {} }),
    });
    const { run } = (await response.json()) as { run: { run_id: string; status: string } };
    expect(run.status).toBe("interrupted");
    const resumed = await fetch(`${base}/threads/${thread}/runs/${run.run_id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ approval: { approved: false, comment: "not today" } }),
    });
    expect(resumed.status).toBe(200);
    const ended = await fetch(`${base}/threads/${thread}/runs/${run.run_id}/wait`);
    expect(ended.status).toBe(200);
    const { run: stored } = await api<{ run: ListedRun }>(`/runs/${run.run_id}/frames?limit=1`);
    expect(stored.status).toBe("success");
    expect(stored.segments).toHaveLength(2);
    expect(stored.segments[0]!.resume).toBeUndefined();
    expect(stored.segments[1]!.resume).toEqual([
      {
        interruptId: "approve-1",
        status: "resolved",
        payload: { approved: false, comment: "not today" },
      },
    ]);
  });
});

/**
 * One conversation, every face: a task made over A2A is a run the AG-UI face replays on the
 * same context id, and a run made by an AG-UI client (or over ACP) is a task A2A clients list
 * and read, on the context the AG-UI client named.
 */
import { randomUUID } from "node:crypto";
import { ListTasksRequest, TaskState } from "@a2a-js/sdk";
import { HttpAgent } from "@ag-ui/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReconnectingAgent } from "../helpers/agui-reconnect.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { a2aClient, asTask, responseText, userMessage } from "./helpers.js";

describe("A2A tasks and the other faces", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ unchecked: true });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("an AG-UI client's run is a task on its own thread id", async () => {
    const threadId = `chat-${randomUUID()}`;
    const agui = new HttpAgent({ url: `${base}/ag-ui/echo`, threadId });
    agui.addMessage({ id: randomUUID(), role: "user", content: "from AG-UI" });
    await agui.runAgent();

    const client = await a2aClient(base, "echo", "JSONRPC");
    const listed = await client.listTasks(ListTasksRequest.fromJSON({ contextId: threadId }));
    expect(listed.tasks).toHaveLength(1);
    const task = await client.getTask({ id: listed.tasks[0]!.id } as never);
    expect(task.contextId).toBe(threadId);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(task)).toBe("from AG-UI");
  });

  it("an A2A task's context is the AG-UI thread: a client connecting to it gets the exchange", async () => {
    const contextId = `chat-${randomUUID()}`;
    const client = await a2aClient(base, "echo", "HTTP+JSON");
    const task = asTask(
      await client.sendMessage({ message: userMessage("from A2A", { contextId }) } as never),
    );
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const agui = new ReconnectingAgent(`${base}/ag-ui/echo`, contextId);
    await agui.connectAgent();
    expect(agui.messages.map((m) => [m.role, (m as { content?: unknown }).content])).toEqual([
      ["user", "from A2A"],
      ["assistant", "from A2A"],
    ]);
  });
});

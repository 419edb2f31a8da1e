/**
 * CopilotKit's thread views (the store behind `useThreads` and the threads drawer, from
 * @copilotkit/core) against the server: a user's threads of one agent listed from storage,
 * paged, renamed, archived and deleted; a thread's messages, state and events read back.
 */
import { randomUUID } from "node:crypto";
import { ɵcreateThreadStore as createThreadStore } from "@copilotkit/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { copilotClient, until } from "../helpers/copilotkit.js";
import { listen } from "../runs/helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes.
    adapter: { type: echo }
  - name: other
    version: 1.0.0
    description: Another agent.
    adapter: { type: echo }
`;

describe("CopilotKit thread views", () => {
  let t: TestApp;
  let runtimeUrl: string;
  const threads: string[] = [];
  beforeAll(async () => {
    t = await build({ yaml: YAML });
    runtimeUrl = `${await listen(t)}/copilotkit`;
    const client = await copilotClient(runtimeUrl);
    for (const text of ["first", "second", "third"]) {
      const threadId = randomUUID();
      threads.push(threadId);
      const agent = client.agent("echo", threadId);
      agent.addMessage({ id: `${threadId}-u`, role: "user", content: text });
      await client.core.runAgent({ agent });
    }
    const other = client.agent("other", randomUUID());
    other.addMessage({ id: "o", role: "user", content: "elsewhere" });
    await client.core.runAgent({ agent: other });
  });
  afterAll(() => t.close());

  const openStore = async (agentId: string, limit?: number) => {
    const store = createThreadStore({ fetch });
    store.start();
    store.setContext({ runtimeUrl, headers: {}, agentId, ...(limit ? { limit } : {}) });
    await until(() => !store.getState().isLoading, "the thread list");
    return store;
  };

  it("lists the threads of one agent, newest activity first", async () => {
    const store = await openStore("echo");
    const state = store.getState();
    expect(state.error).toBeNull();
    expect(state.threads.map((thread) => thread.id)).toEqual([...threads].reverse());
    expect(state.threads[0]).toMatchObject({ agentId: "echo", name: null, archived: false });
    expect((await openStore("other")).getState().threads).toHaveLength(1);
    store.stop();
  });

  it("pages through a long list", async () => {
    const store = await openStore("echo", 2);
    expect(store.getState().threads).toHaveLength(2);
    store.fetchNextPage();
    await until(() => store.getState().threads.length === 3, "the second page");
    expect(store.getState().nextCursor).toBeNull();
    store.stop();
  });

  it("renames, archives and deletes threads, and the list shows it", async () => {
    const store = await openStore("echo");
    await store.renameThread(threads[0]!, "Trip plans");
    await store.archiveThread(threads[1]!);
    store.refresh();
    await until(() => store.getState().threads.length === 2, "the archived thread to go");
    const renamed = store.getState().threads.find((thread) => thread.id === threads[0]);
    expect(renamed?.name).toBe("Trip plans");

    const withArchived = createThreadStore({ fetch });
    withArchived.start();
    withArchived.setContext({ runtimeUrl, headers: {}, agentId: "echo", includeArchived: true });
    await until(() => withArchived.getState().threads.length === 3, "archived threads listed");
    await withArchived.unarchiveThread(threads[1]!);

    await store.deleteThread(threads[2]!);
    expect((await t.call("GET", `/threads/${threads[2]}`)).status).toBe(404);
    store.refresh();
    await until(
      () =>
        store
          .getState()
          .threads.map((thread) => thread.id)
          .join() === [threads[1], threads[0]].join(),
      "the list after unarchive and delete",
    );
    store.stop();
    withArchived.stop();
  });

  it("reads a thread's messages, state and events from storage", async () => {
    const threadId = threads[0]!;
    const messages = (await (await fetch(`${runtimeUrl}/threads/${threadId}/messages`)).json()) as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(messages.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "first"],
      ["assistant", "first"],
    ]);
    const state = await (await fetch(`${runtimeUrl}/threads/${threadId}/state`)).json();
    expect(state).toEqual({ state: { turns: 1, last_message: "first" } });
    const events = (await (await fetch(`${runtimeUrl}/threads/${threadId}/events`)).json()) as {
      events: Array<{ type: string }>;
    };
    expect(events.events.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "MESSAGES_SNAPSHOT",
      "STATE_SNAPSHOT",
      "RUN_FINISHED",
    ]);
    expect((await fetch(`${runtimeUrl}/threads/${randomUUID()}/messages`)).status).toBe(404);
  });

  it("refuses a list without an agent, or for an unknown one", async () => {
    expect((await fetch(`${runtimeUrl}/threads`)).status).toBe(400);
    expect((await fetch(`${runtimeUrl}/threads?agentId=nobody`)).status).toBe(404);
    const mutation = await fetch(`${runtimeUrl}/threads/${threads[0]}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "no agent" }),
    });
    expect(mutation.status).toBe(400);
  });
});

/**
 * Tasks belong to whoever made them, as threads and runs do: with API keys and end users'
 * tokens configured, another caller gets TaskNotFound for a task, sees none of it in ListTasks
 * and cannot continue it; a shared context name is two contexts. The card is public and
 * declares the schemes the server enforces; the operations are not.
 */
import { ListTasksRequest, TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { startIssuer, type TestIssuer } from "../helpers/jwt-issuer.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";
import { a2aClient, asTask, BINDINGS, responseText, userMessage } from "./helpers.js";

const KEY_A = "app-a-key-0123456789abcdef";
const KEY_B = "app-b-key-0123456789abcdef";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("A2A tasks between principals", () => {
  let t: TestApp;
  let issuer: TestIssuer;
  let base: string;
  const as: Record<string, Record<string, string>> = {};
  beforeAll(async () => {
    issuer = await startIssuer();
    t = await buildServing(
      {
        server: {
          auth: {
            keys: [
              { key: KEY_A, name: "app-a" },
              { key: KEY_B, name: "app-b" },
            ],
            jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUrl: issuer.jwksUrl },
          },
        },
        agents: [echoAgent("echo")],
      },
      { unchecked: true },
    );
    base = await listen(t);
    as.a = bearer(KEY_A);
    as.b = { "x-api-key": KEY_B };
    as.alice = bearer(await issuer.token("alice"));
    as.bob = bearer(await issuer.token("bob"));
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
  });

  it("serves the card without a key, declaring the key and token schemes", async () => {
    const response = await fetch(`${base}/a2a/echo/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const card = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(card.securitySchemes as object).sort()).toEqual(["apiKey", "bearer"]);
    expect(card.securitySchemes).toMatchObject({
      apiKey: { apiKeySecurityScheme: { location: "header", name: "x-api-key" } },
      bearer: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } },
    });
    const refused = await fetch(`${base}/a2a/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }),
    });
    expect(refused.status).toBe(401);
  });

  it.each(BINDINGS)("keeps each caller's tasks its own (%s)", async (binding) => {
    for (const [owner, other] of [
      ["a", "b"],
      ["alice", "bob"],
      ["a", "alice"],
    ] as const) {
      const mine = await a2aClient(base, "echo", binding, as[owner]);
      const theirs = await a2aClient(base, "echo", binding, as[other]);
      const contextId = `shared-${binding}-${owner}-${other}`;
      const task = asTask(
        await mine.sendMessage({ message: userMessage(`from ${owner}`, { contextId }) } as never),
      );
      expect(responseText(task)).toBe(`from ${owner}`);
      await expect(theirs.getTask({ id: task.id } as never)).rejects.toMatchObject({
        name: "TaskNotFoundError",
      });
      await expect(theirs.cancelTask({ id: task.id } as never)).rejects.toMatchObject({
        name: "TaskNotFoundError",
      });
      await expect(
        theirs.sendMessage({ message: userMessage("mine now", { taskId: task.id }) } as never),
      ).rejects.toMatchObject({ name: "TaskNotFoundError" });
      const listed = await theirs.listTasks(ListTasksRequest.fromJSON({ contextId }));
      expect(listed.tasks.map((t) => t.id)).not.toContain(task.id);
      // The same context name is the other caller's own, separate context.
      const own = asTask(
        await theirs.sendMessage({ message: userMessage("hello", { contextId }) } as never),
      );
      expect(own.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const ownList = await theirs.listTasks(ListTasksRequest.fromJSON({ contextId }));
      expect(ownList.tasks.map((t) => t.id)).toEqual([own.id]);
    }
  });
});

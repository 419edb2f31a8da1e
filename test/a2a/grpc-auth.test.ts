/**
 * Credentials on A2A's gRPC binding, as the official client meets them: an API key or an end
 * user's token in the `authorization` metadata (or a key in `x-api-key`) is served; none, a
 * wrong one or an expired token is UNAUTHENTICATED, a key for other agents PERMISSION_DENIED.
 * Another caller's task is NOT_FOUND exactly as a missing one. The extended card comes over
 * gRPC to an authenticated caller, its GRPC interface included.
 */
import { randomUUID } from "node:crypto";
import { ListTaskPushNotificationConfigsRequest, TaskPushNotificationConfig } from "@a2a-js/sdk";
import { decodeErrorInfo, decodeStatus } from "@a2a-js/sdk/errors/grpc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { startIssuer, type TestIssuer } from "../helpers/jwt-issuer.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";
import { grpcClient } from "./grpc-helpers.js";
import { asTask, collect, responseText, userMessage } from "./helpers.js";

const KEY = "app-key-0123456789abcdef";
const OTHER_AGENTS_KEY = "other-key-0123456789abcdef";
const UNAUTHENTICATED = 16;
const PERMISSION_DENIED = 7;
const NOT_FOUND = 5;

async function refusal(call: Promise<unknown>) {
  const err = (await call.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  )) as { status: number; message: string; statusDetailsBin?: Buffer };
  const status = err.statusDetailsBin ? decodeStatus(err.statusDetailsBin) : undefined;
  const info = status?.details[0] ? decodeErrorInfo(status.details[0].value) : undefined;
  // The google.rpc.Status's own message (the SDK prefixes the one it raises for reasons that
  // are not A2A's).
  const message = status?.message ?? err.message;
  return { code: err.status, message, reason: info?.reason, domain: info?.domain };
}

describe("A2A over gRPC with API keys and tokens", () => {
  let t: TestApp;
  let issuer: TestIssuer;
  let base: string;
  beforeAll(async () => {
    issuer = await startIssuer();
    // The binding switched on in the config file, as a deployment does (its host: the server's).
    t = await buildServing(
      {
        server: {
          auth: {
            keys: [
              { key: KEY, name: "app" },
              { key: OTHER_AGENTS_KEY, name: "other", agents: ["other"] },
            ],
            jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUrl: issuer.jwksUrl },
          },
          a2a: { grpc: { enabled: true, port: 0 } },
        },
        agents: [echoAgent("echo"), echoAgent("other", { adapter: { type: "echo", delayMs: 60 } })],
      },
      { unchecked: true },
    );
    base = await listen(t);
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
  });

  it("serves a key in either metadata, and an end user's token", async () => {
    const ways: Record<string, string>[] = [
      { authorization: `Bearer ${KEY}` },
      { "x-api-key": KEY },
      { authorization: `Bearer ${await issuer.token("alice")}` },
    ];
    for (const metadata of ways) {
      const client = await grpcClient(base, "echo", metadata);
      const task = asTask(await client.sendMessage({ message: userMessage("hi") } as never));
      expect(responseText(task)).toBe("hi");
    }
  });

  it("refuses a call without credentials, or with bad ones, with UNAUTHENTICATED", async () => {
    const none = await grpcClient(base, "echo");
    expect(await refusal(none.sendMessage({ message: userMessage("hi") } as never))).toEqual({
      code: UNAUTHENTICATED,
      message: "missing API key or bearer token",
      reason: "UNAUTHENTICATED",
      domain: "acp-agui",
    });
    const stream = await refusal(
      collect(none.sendMessageStream({ message: userMessage("hi") } as never)),
    );
    expect(stream.code).toBe(UNAUTHENTICATED);
    const wrong = await grpcClient(base, "echo", { "x-api-key": "not-a-key" });
    expect(await refusal(wrong.getTask({ id: "any" } as never))).toMatchObject({
      code: UNAUTHENTICATED,
      message: "invalid API key or bearer token",
    });
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    const expired = await issuer.token("alice", {}, { expiresIn: hourAgo });
    const late = await grpcClient(base, "echo", { authorization: `Bearer ${expired}` });
    expect(await refusal(late.getTask({ id: "any" } as never))).toMatchObject({
      code: UNAUTHENTICATED,
      message: "token expired",
    });
  });

  it("refuses a key for other agents with PERMISSION_DENIED; its own agent serves it", async () => {
    const client = await grpcClient(base, "echo", { "x-api-key": OTHER_AGENTS_KEY });
    expect(await refusal(client.sendMessage({ message: userMessage("hi") } as never))).toEqual({
      code: PERMISSION_DENIED,
      message: 'API key "other" may not use agent echo',
      reason: "PERMISSION_DENIED",
      domain: "acp-agui",
    });
    const own = await grpcClient(base, "other", { "x-api-key": OTHER_AGENTS_KEY });
    const task = asTask(await own.sendMessage({ message: userMessage("mine") } as never));
    expect(responseText(task)).toBe("mine");
  });

  it("answers another caller's task as NOT_FOUND, exactly as a missing one", async () => {
    const alice = await grpcClient(base, "other", {
      authorization: `Bearer ${await issuer.token("alice")}`,
    });
    const bob = await grpcClient(base, "other", {
      authorization: `Bearer ${await issuer.token("bob")}`,
    });
    const task = asTask(
      await alice.sendMessage({
        message: userMessage("secret words here"),
        configuration: { returnImmediately: true },
      } as never),
    );
    const missing = randomUUID();
    const as = (id: string, text: string) => text.replaceAll(id, "<id>");
    const calls = (id: string) => [
      bob.getTask({ id } as never),
      bob.cancelTask({ id } as never),
      collect(bob.resubscribeTask({ id } as never)),
      bob.sendMessage({ message: userMessage("more", { taskId: id }) } as never),
      bob.listTaskPushNotificationConfig(
        ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: id }),
      ),
      bob.createTaskPushNotificationConfig(
        TaskPushNotificationConfig.fromJSON({ taskId: id, url: "https://hooks.example.com/a2a" }),
      ),
    ];
    const theirs = await Promise.all(calls(task.id).map(refusal));
    const nobodys = await Promise.all(calls(missing).map(refusal));
    for (const [index, refused] of theirs.entries()) {
      expect(refused.code).toBe(NOT_FOUND);
      expect({ ...refused, message: as(task.id, refused.message) }).toEqual({
        ...nobodys[index],
        message: as(missing, nobodys[index]!.message),
      });
    }
    // Alice still has it.
    expect((await alice.getTask({ id: task.id } as never)).id).toBe(task.id);
  });

  it("gives an authenticated caller the extended card over gRPC", async () => {
    const ways: [Record<string, string>, string][] = [
      [{ "x-api-key": KEY }, "key:app"],
      [{ authorization: `Bearer ${await issuer.token("alice")}` }, "user:alice"],
    ];
    for (const [metadata, caller] of ways) {
      const client = await grpcClient(base, "echo", metadata);
      // The SDK asks for the extended card (GetExtendedAgentCard) as the public card offers one.
      const card = await client.getAgentCard();
      const extension = card.capabilities?.extensions.find((e) => e.uri === "urn:acp-agui:agent");
      expect(extension?.params).toMatchObject({
        caller,
        agui: `${base}/ag-ui/echo`,
      });
      const grpc = card.supportedInterfaces.find((i) => i.protocolBinding === "GRPC");
      expect(grpc).toMatchObject({
        tenant: "echo",
        url: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      });
    }
  });
});

/**
 * What setting a push notification config refuses at once, on both bindings over raw HTTP: a
 * webhook URL delivery would never call (loopback, private, link-local, unspecified addresses,
 * names that resolve to one, schemes other than http(s)), as InvalidParams naming the rule,
 * unless the operator allows private targets; and a config past the per-task limit. A config
 * that comes with a message is checked before the message creates a task. Delivery still
 * checks the target (DNS can change).
 */
import { randomUUID } from "node:crypto";
import type { LookupAddress } from "node:dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { BINDINGS, type Binding } from "./helpers.js";
import { receiver, until } from "./push-helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
`;

// biome-ignore lint/suspicious/noExplicitAny: the wire's JSON, read freely by the assertions
type Wire = any;

const V1 = { "content-type": "application/json", "a2a-version": "1.0" };

/** Host names as this test's resolver answers them. */
let rebinds = 0;
async function resolve(name: string): Promise<LookupAddress[]> {
  switch (name) {
    case "intranet.example":
      return [{ address: "10.20.30.40", family: 4 }];
    case "dual.example":
      return [
        { address: "93.184.216.34", family: 4 },
        { address: "fe80::1", family: 6 },
      ];
    case "public.example":
      return [{ address: "93.184.216.34", family: 4 }];
    // Public when the config is set, loopback by the time a notification goes.
    case "rebind.example":
      return [{ address: rebinds++ === 0 ? "93.184.216.34" : "127.0.0.1", family: 4 }];
    default:
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
  }
}

async function rpc(base: string, method: string, params: unknown) {
  const response = await fetch(`${base}/a2a/echo`, {
    method: "POST",
    headers: V1,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: response.status, body: (await response.json()) as Wire };
}

async function newTask(base: string): Promise<string> {
  const { body } = await rpc(base, "SendMessage", {
    message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hello" }] },
    configuration: { returnImmediately: true },
  });
  return (body.result.task ?? body.result).id as string;
}

/** CreateTaskPushNotificationConfig over `binding`: the created config, or the refusal's message. */
async function createConfig(
  base: string,
  binding: Binding,
  taskId: string,
  config: Record<string, unknown>,
): Promise<{ ok: true; config: Wire } | { ok: false; message: string }> {
  if (binding === "JSONRPC") {
    const { status, body } = await rpc(base, "CreateTaskPushNotificationConfig", {
      taskId,
      ...config,
    });
    expect(status).toBe(200);
    if (body.error) {
      expect(body.error.code).toBe(-32602);
      return { ok: false, message: body.error.message };
    }
    return { ok: true, config: body.result };
  }
  const response = await fetch(`${base}/a2a/echo/tasks/${taskId}/pushNotificationConfigs`, {
    method: "POST",
    headers: V1,
    body: JSON.stringify(config),
  });
  const body = (await response.json()) as Wire;
  if (response.status !== 200) {
    expect(response.status).toBe(400);
    expect(body.error.status).toBe("INVALID_ARGUMENT");
    return { ok: false, message: body.error.message };
  }
  return { ok: true, config: body };
}

async function listConfigs(base: string, taskId: string): Promise<string[]> {
  const { body } = await rpc(base, "ListTaskPushNotificationConfigs", { taskId });
  return (body.result.configs as Wire[]).map((c) => c.url);
}

const REFUSED: Array<[url: string, rule: string]> = [
  ["http://169.254.169.254/latest/meta-data/", "a cloud metadata (link-local) address"],
  ["http://10.0.0.1/", "a private address (10.0.0.1)"],
  ["http://[::1]/", "a loopback address (::1)"],
  ["http://0.0.0.0/", "an unspecified address (0.0.0.0)"],
  ["http://127.0.0.1:8080/hook", "a loopback address (127.0.0.1)"],
  ["http://[fe80::1]/", "a link-local address"],
  ["http://localhost:9000/", "names a localhost host"],
  ["http://intranet.example/hook", "a private address (10.20.30.40)"],
  ["http://dual.example/hook", "a link-local address (fe80::1)"],
  ["ftp://public.example/hook", "uses the scheme ftp; only http and https are allowed"],
  ["file:///etc/passwd", "uses the scheme file"],
];

describe.each(BINDINGS)("A2A push configs refused when set, over %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({
      yaml: YAML,
      unchecked: true,
      settings: { a2a: { ...DEFAULT_SETTINGS.a2a, maxPushConfigsPerTask: 3 } },
      resolveWebhookHost: resolve,
    });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("refuses a target delivery would never call, naming the rule, and stores nothing", async () => {
    const taskId = await newTask(base);
    for (const [url, rule] of REFUSED) {
      const result = await createConfig(base, binding, taskId, { url });
      expect(result, url).toMatchObject({ ok: false });
      const { message } = result as { message: string };
      expect(message).toContain(rule);
      if (!url.startsWith("ftp:") && !url.startsWith("file:")) {
        expect(message).toContain("server.webhooks.allowPrivateTargets");
      }
    }
    expect(await listConfigs(base, taskId)).toEqual([]);
  });

  it("accepts a public target, and a name that does not resolve now", async () => {
    const taskId = await newTask(base);
    for (const url of ["https://public.example/hook", "https://nowhere.invalid/hook"]) {
      expect(await createConfig(base, binding, taskId, { url })).toMatchObject({ ok: true });
    }
    expect(await listConfigs(base, taskId)).toEqual([
      "https://public.example/hook",
      "https://nowhere.invalid/hook",
    ]);
  });

  it("refuses a config past the task's limit; replacing one, or one deleted, leaves room", async () => {
    const taskId = await newTask(base);
    for (const id of ["a", "b", "c"]) {
      const url = `https://public.example/${id}`;
      expect(await createConfig(base, binding, taskId, { id, url })).toMatchObject({ ok: true });
    }
    const past = await createConfig(base, binding, taskId, {
      id: "d",
      url: "https://public.example/d",
    });
    expect(past).toEqual({
      ok: false,
      message: `task "${taskId}" has 3 push notification configs already, the most a task may have (server.a2a.maxPushConfigsPerTask): delete one first`,
    });
    const replaced = await createConfig(base, binding, taskId, {
      id: "b",
      url: "https://public.example/b2",
    });
    expect(replaced).toMatchObject({ ok: true });
    const { body } = await rpc(base, "DeleteTaskPushNotificationConfig", { taskId, id: "a" });
    expect(body.error).toBeUndefined();
    const again = await createConfig(base, binding, taskId, {
      id: "d",
      url: "https://public.example/d",
    });
    expect(again).toMatchObject({ ok: true });
    expect(await listConfigs(base, taskId)).toEqual([
      "https://public.example/b2",
      "https://public.example/c",
      "https://public.example/d",
    ]);
  });
});

describe("A2A push configs sent with a message", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, unchecked: true, resolveWebhookHost: resolve });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("are checked before the message creates a task", async () => {
    const { body } = await rpc(base, "SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hello" }] },
      configuration: { taskPushNotificationConfig: { url: "http://intranet.example/" } },
    });
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain("a private address (10.20.30.40)");
    expect(await t.storage.searchRuns({ limit: 10, offset: 0 })).toEqual([]);
  });

  it("a target that passed when set is still refused at delivery once it resolves privately", async () => {
    const { body } = await rpc(base, "SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hello" }] },
      configuration: { taskPushNotificationConfig: { url: "http://rebind.example/hook" } },
    });
    expect(body.error).toBeUndefined();
    const taskId = (body.result.task ?? body.result).id as string;
    let deliveries: Awaited<ReturnType<TestApp["storage"]["getWebhooksOfRun"]>> = [];
    await until(async () => {
      deliveries = await t.storage.getWebhooksOfRun(taskId);
      return deliveries.length > 0 && deliveries.every((d) => d.state === "failed");
    }, "the refusals at delivery");
    for (const delivery of deliveries) {
      expect(delivery.last_error).toContain("resolves to a loopback address (127.0.0.1)");
    }
  });
});

describe("A2A push configs with private targets allowed", () => {
  let t: TestApp;
  let base: string;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    hooks = await receiver();
    t = await build({
      yaml: YAML,
      unchecked: true,
      settings: { webhooks: { ...DEFAULT_SETTINGS.webhooks, allowPrivateTargets: true } },
      resolveWebhookHost: resolve,
    });
    base = await listen(t);
  });
  afterAll(async () => {
    await t.close();
    await hooks.close();
  });

  it.each(BINDINGS)(
    "accepts a loopback or private target over %s; other schemes stay refused",
    async (binding) => {
      const taskId = await newTask(base);
      for (const url of [hooks.url, "http://10.0.0.1/", "http://intranet.example/"]) {
        expect(await createConfig(base, binding, taskId, { url })).toMatchObject({ ok: true });
      }
      const ftp = await createConfig(base, binding, taskId, { url: "ftp://10.0.0.1/" });
      expect(ftp).toMatchObject({ ok: false });
      expect((ftp as { message: string }).message).toContain("uses the scheme ftp");
    },
  );
});

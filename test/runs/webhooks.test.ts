import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { acpValidator } from "../../src/validation/index.js";
import type { TestApp } from "../helpers/app.js";
import {
  agentId,
  buildWith,
  finished,
  type Json,
  newThread,
  post,
  snapshot,
  started,
  until,
} from "./helpers.js";

type Run = Json & { run_id: string; status: string };

/** A webhook receiver on 127.0.0.1 that records every POSTed body and answers 204. */
async function receiver() {
  const received: Array<{ path: string; body: Run; headers: Json }> = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      text += chunk;
    });
    req.on("end", () => {
      received.push({ path: req.url ?? "", body: JSON.parse(text) as Run, headers: req.headers });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    received,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const agents = [{ name: "quick", script: [started, snapshot({ hooked: true }), finished()] }];

describe("webhooks end to end", () => {
  let t: TestApp;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    hooks = await receiver();
    t = await buildWith(agents, {
      settings: {
        webhooks: { ...DEFAULT_SETTINGS.webhooks, allowPrivateTargets: true, maxAttempts: 3 },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await hooks.close();
  });

  const deliveriesTo = (path: string, count: number) =>
    until(
      async () => hooks.received.filter((r) => r.path === path),
      (found) => found.length >= count,
      5_000,
      `${count} webhook deliveries to ${path}`,
    );

  it("POST /runs › the Run JSON is POSTed on each status change: pending, then success", async () => {
    const created = (await post(t, "/runs", {
      agent_id: agentId("quick"),
      webhook: hooks.url("/stateless"),
    })) as Run;
    const deliveries = await deliveriesTo("/stateless", 2);
    expect(deliveries.map((d) => d.body.status)).toEqual(["pending", "success"]);
    const validate = acpValidator("RunStateless");
    for (const delivery of deliveries) {
      expect(validate(delivery.body), JSON.stringify(validate.errors)).toBe(true);
      expect(delivery.headers["content-type"]).toMatch(/^application\/json/);
    }
    expect(deliveries[0]!.body).toEqual(created);
    const now = (await t.call("GET", `/runs/${created.run_id}`)).body as Run;
    expect(deliveries[1]!.body).toEqual(now);
    // on_completion delete removed the hidden thread; the last delivery says so too.
    expect(now.thread_id).toBeUndefined();
  });

  it("POST /threads/{id}/runs › the same for a thread run; the last body equals GET at that status", async () => {
    const threadId = await newThread(t);
    const created = (await post(t, `/threads/${threadId}/runs`, {
      agent_id: agentId("quick"),
      webhook: hooks.url("/stateful"),
    })) as Run;
    const deliveries = await deliveriesTo("/stateful", 2);
    expect(deliveries.map((d) => d.body.status)).toEqual(["pending", "success"]);
    expect(deliveries[0]!.body).toEqual(created);
    const now = (await t.call("GET", `/threads/${threadId}/runs/${created.run_id}`)).body as Run;
    expect(deliveries[1]!.body).toEqual(now);
    expect(now.thread_id).toBe(threadId);
    // The receiver may answer before the deliverer has recorded the outcome.
    const recorded = await until(
      () => t.storage.getWebhooksOfRun(created.run_id),
      (found) => found.every((d) => d.state === "delivered"),
      2_000,
      "both deliveries to be recorded as delivered",
    );
    expect(recorded).toMatchObject([
      { state: "delivered", attempts: 1 },
      { state: "delivered", attempts: 1 },
    ]);
  });
});

describe("webhooks › private targets", () => {
  let t: TestApp;
  let rebinds = 0;
  beforeAll(async () => {
    t = await buildWith(agents, {
      // Names resolved at creation: the guard judges the addresses they resolve to.
      resolveWebhookHost: async (name) => {
        if (name === "intranet.example") return [{ address: "10.20.30.40", family: 4 }];
        if (name === "dual.example") {
          return [
            { address: "93.184.216.34", family: 4 },
            { address: "::1", family: 6 },
          ];
        }
        // Public when the run is created, loopback by the time it is delivered.
        if (name === "rebind.example") {
          return [{ address: rebinds++ === 0 ? "93.184.216.34" : "127.0.0.1", family: 4 }];
        }
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
      },
    });
  });
  afterAll(() => t.close());

  it.each([
    ["http://127.0.0.1:9/hook", "a loopback"],
    ["http://10.1.2.3/hook", "a private"],
    ["http://localhost:8080/hook", "names a localhost host"],
    ["http://169.254.169.254/latest/meta-data/", "a cloud metadata (link-local) address"],
    ["http://0.0.0.0/hook", "an unspecified address"],
    ["http://intranet.example/hook", "a private address (10.20.30.40)"],
    ["http://dual.example/hook", "a loopback address (::1)"],
  ])(
    "POST /runs › 422 at creation for %s when private targets are not allowed",
    async (url, why) => {
      const res = await t.call("POST", "/runs", { agent_id: agentId("quick"), webhook: url });
      expect(res.status).toBe(422);
      expect(res.body).toContain(`webhook ${url}`);
      expect(res.body).toContain(why);
      expect(res.body).toContain("allowPrivateTargets");
      expect(await t.storage.searchRuns({ limit: 10, offset: 0 })).toEqual([]);
    },
  );

  it("POST /runs › 422 for a scheme other than http(s), naming it", async () => {
    const res = await t.call("POST", "/runs", {
      agent_id: agentId("quick"),
      webhook: "ftp://public.example/hook",
    });
    expect(res.status).toBe(422);
    expect(res.body).toContain("uses the scheme ftp; only http and https are allowed");
  });

  it("POST /runs › a name that does not resolve now is accepted (delivery checks it)", async () => {
    const webhook = "http://nowhere.invalid/hook";
    const res = await t.call("POST", "/runs", { agent_id: agentId("quick"), webhook });
    expect(res.status).toBe(200);
  });

  it("POST /runs › a public name is accepted, and refused at delivery once it resolves to loopback", async () => {
    const res = await t.call("POST", "/runs", {
      agent_id: agentId("quick"),
      webhook: "http://rebind.example/hook",
    });
    expect(res.status).toBe(200);
    const runId = (res.body as Run).run_id;
    const failed = await until(
      () => t.storage.getWebhooksOfRun(runId),
      (found) => found.length === 2 && found.every((d) => d.state === "failed"),
      5_000,
      "both deliveries to be refused",
    );
    for (const delivery of failed) {
      expect(delivery.last_error).toContain("resolves to a loopback address (127.0.0.1)");
    }
  });
});

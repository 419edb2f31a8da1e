import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { agentIdFor } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS, mergeSettings } from "../../src/config/settings.js";
import type { TestApp } from "../helpers/app.js";
import { buildServing, echoAgent } from "./helpers.js";

const ADMIN = "admin-key-0123456789abcdef";
const ALPHA_ONLY = "alpha-only-key-0123456789";
const alpha = agentIdFor("alpha", "1.0.0");
const beta = agentIdFor("beta", "1.0.0");
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const userSays = { messages: [{ role: "user", content: "hi" }] };

describe("without API keys", () => {
  it("every endpoint answers without a key (authentication is off)", async () => {
    const t = await buildServing({ agents: [echoAgent("alpha")] });
    try {
      expect((await t.call("POST", "/agents/search", {})).status).toBe(200);
      expect((await t.call("POST", "/threads", {})).status).toBe(200);
      const metrics = await t.app.inject({ method: "GET", url: "/metrics" });
      expect(metrics.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe("with API keys", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildServing({
      server: {
        auth: {
          keys: [
            { key: ADMIN, name: "admin", admin: true },
            { key: ALPHA_ONLY, name: "alpha-team", agents: ["alpha"] },
          ],
        },
      },
      agents: [echoAgent("alpha"), echoAgent("beta")],
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it("a request without a key gets 401, www-authenticate: Bearer and an ACP string error", async () => {
    const res = await t.call("POST", "/threads", {});
    expect(res.status).toBe(401);
    expect(res.body).toBe("missing or invalid API key");
    expect(res.headers["www-authenticate"]).toBe("Bearer");
  });

  it("a wrong key gets 401, whatever its length", async () => {
    for (const key of [
      "x",
      ADMIN.slice(0, -1),
      `${ADMIN}x`,
      ADMIN.toUpperCase(),
      "y".repeat(10_000),
    ]) {
      const res = await t.call("POST", "/threads", {}, bearer(key));
      expect(res.status, key.slice(0, 30)).toBe(401);
      const other = await t.call("POST", "/threads", {}, { "x-api-key": key });
      expect(other.status).toBe(401);
    }
  });

  it("accepts the key as a Bearer token (any case of the scheme) or in x-api-key", async () => {
    expect((await t.call("POST", "/threads", {}, bearer(ADMIN))).status).toBe(200);
    expect(
      (await t.call("POST", "/threads", {}, { authorization: `bearer  ${ADMIN} ` })).status,
    ).toBe(200);
    expect((await t.call("POST", "/threads", {}, { "x-api-key": ADMIN })).status).toBe(200);
    // Another scheme is no key; x-api-key still counts.
    const basic = { authorization: "Basic YTpi", "x-api-key": ADMIN };
    expect((await t.call("POST", "/threads", {}, basic)).status).toBe(200);
  });

  it("health, readiness and the protocol documents stay open", async () => {
    for (const url of [
      "/healthz",
      "/readyz",
      "/openapi.json",
      "/schemas/acp.openapi.json",
      "/schemas/ag-ui.schema.json",
    ]) {
      expect((await t.app.inject({ method: "GET", url })).statusCode, url).toBe(200);
    }
  });

  it("unknown routes need a key too (they reveal nothing without one)", async () => {
    const res = await t.app.inject({ method: "GET", url: "/nothing/here" });
    expect(res.statusCode).toBe(401);
  });

  it("GET /metrics › needs an unrestricted key", async () => {
    expect((await t.app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(401);
    const restricted = await t.app.inject({
      method: "GET",
      url: "/metrics",
      headers: bearer(ALPHA_ONLY),
    });
    expect(restricted.statusCode).toBe(403);
    expect(JSON.parse(restricted.body)).toContain("metrics need an unrestricted key");
    const admin = await t.app.inject({ method: "GET", url: "/metrics", headers: bearer(ADMIN) });
    expect(admin.statusCode).toBe(200);
  });

  describe("a key restricted to some agents", () => {
    const key = bearer(ALPHA_ONLY);

    it("POST /agents/search › lists only its agents", async () => {
      const res = await t.call("POST", "/agents/search", {}, key);
      expect((res.body as Array<{ agent_id: string }>).map((a) => a.agent_id)).toEqual([alpha]);
      const all = await t.call("POST", "/agents/search", {}, bearer(ADMIN));
      expect((all.body as unknown[]).length).toBe(2);
    });

    it("GET /agents/{id} and its descriptor › 403 for another agent, 200 for its own", async () => {
      expect((await t.call("GET", `/agents/${alpha}`, undefined, key)).status).toBe(200);
      expect((await t.call("GET", `/agents/${alpha}/descriptor`, undefined, key)).status).toBe(200);
      const other = await t.call("GET", `/agents/${beta}`, undefined, key);
      expect(other.status).toBe(403);
      expect(other.body).toBe(`API key "alpha-team" may not use agent ${beta}`);
      expect((await t.call("GET", `/agents/${beta}/descriptor`, undefined, key)).status).toBe(403);
    });

    it("run creation › 403 for another agent on every run-creating endpoint", async () => {
      const thread = ((await t.call("POST", "/threads", {}, key)).body as { thread_id: string })
        .thread_id;
      for (const url of [
        "/runs",
        "/runs/wait",
        "/runs/stream",
        `/threads/${thread}/runs`,
        `/threads/${thread}/runs/wait`,
        `/threads/${thread}/runs/stream`,
      ]) {
        const res = await t.call("POST", url, { agent_id: beta, input: userSays }, key);
        expect(res.status, url).toBe(403);
      }
      const own = await t.call("POST", "/runs/wait", { agent_id: alpha, input: userSays }, key);
      expect(own.status).toBe(200);
    });

    it("existing runs of another agent › someone else's are 404 by run id; run search filtered", async () => {
      const betaRun = (
        await t.call(
          "POST",
          "/runs/wait",
          { agent_id: beta, input: userSays, on_completion: "keep" },
          bearer(ADMIN),
        )
      ).body as { run: { run_id: string } };
      const runId = betaRun.run.run_id;
      // The admin's run is not this key's: it does not exist for it, whatever its agent.
      expect((await t.call("GET", `/runs/${runId}`, undefined, key)).status).toBe(404);
      expect((await t.call("GET", `/runs/${runId}/wait`, undefined, key)).status).toBe(404);
      expect((await t.call("POST", `/runs/${runId}/cancel`, undefined, key)).status).toBe(404);
      expect((await t.call("DELETE", `/runs/${runId}`, undefined, key)).status).toBe(404);

      const search = await t.call("POST", "/runs/search", {}, key);
      const agents = new Set((search.body as Array<{ agent_id: string }>).map((r) => r.agent_id));
      expect([...agents]).toEqual([alpha]);
      expect((await t.call("POST", "/runs/search", { agent_id: beta }, key)).status).toBe(403);
    });

    it("the AG-UI face › 403 for another agent, by id and by name", async () => {
      const input = { threadId: "t-1", runId: "r-1", messages: [], tools: [], context: [] };
      for (const url of [`/agents/${beta}/ag-ui`, "/ag-ui/beta"]) {
        const res = await t.app.inject({ method: "POST", url, payload: input, headers: key });
        expect(res.statusCode, url).toBe(403);
      }
      for (const url of [
        `/agents/${beta}/ag-ui/capabilities`,
        "/ag-ui/beta/capabilities",
        "/ag-ui/nobody/capabilities",
      ]) {
        const res = await t.app.inject({ method: "GET", url, headers: key });
        expect(res.statusCode, url).toBe(403);
      }
      const own = await t.app.inject({
        method: "GET",
        url: "/ag-ui/alpha/capabilities",
        headers: key,
      });
      expect(own.statusCode).toBe(200);
    });
  });
});

describe("API keys in the config", () => {
  const agents = [echoAgent("alpha")];
  const parse = (server: unknown, env: Record<string, string> = {}) =>
    parseConfig(JSON.stringify({ server, agents }), { filename: "keys.json", env });

  it("reads a key from the environment variable keyEnv names", async () => {
    const config = await parse(
      { auth: { keys: [{ keyEnv: "TEAM_KEY", name: "team" }] } },
      { TEAM_KEY: "from-the-environment-0123" },
    );
    expect(config.server.auth.keys).toEqual([{ key: "from-the-environment-0123", name: "team" }]);
  });

  it("refuses a short key, an unset keyEnv, both or neither, duplicates and unknown agents — never printing the key", async () => {
    const error = await parse(
      {
        auth: {
          keys: [
            { key: "short", name: "a" },
            { keyEnv: "NOT_SET_ANYWHERE", name: "b" },
            { key: "long-enough-secret-0123", keyEnv: "X", name: "c" },
            { name: "d" },
            { key: "long-enough-secret-4567", name: "e", agents: ["nobody"] },
            { key: "long-enough-secret-4567", name: "e" },
          ],
        },
      },
      {},
    ).catch((err: Error) => err);
    const message = (error as Error).message;
    expect(message).toContain("server.auth.keys[0].key is shorter than 16 characters");
    expect(message).not.toContain('short"');
    expect(message).toContain("keyEnv names NOT_SET_ANYWHERE, which is not set");
    expect(message).toContain("keys[2] needs exactly one of `key` and `keyEnv`");
    expect(message).toContain("keys[3] needs exactly one of `key` and `keyEnv`");
    expect(message).toContain('agents[0] names agent "nobody", which is not configured');
    expect(message).toContain("keys[5].name repeats the name of keys[4]");
    expect(message).toContain("keys[5] has the same key as keys[4]");
    expect(message).not.toContain("long-enough-secret");
  });

  it("keys from the file and from ACP_AGUI_API_KEYS add up", () => {
    const merged = mergeSettings(
      DEFAULT_SETTINGS,
      { auth: { keys: [{ key: "file-key-0123456789", name: "file" }] } },
      { auth: { keys: [{ key: "env-key-0123456789ab", name: "env-1" }] } },
    );
    expect(merged.auth.keys.map((k) => k.name)).toEqual(["file", "env-1"]);
    expect(DEFAULT_SETTINGS.auth.keys).toEqual([]);
  });
});

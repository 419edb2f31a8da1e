/**
 * The CopilotKit routes under the server's own rules: API keys (a key restricted to some agents
 * sees and runs only those), CORS for a browser app on another origin (streams included), the
 * base path from the config (or no routes at all), and threads that outlive a restart.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { createStorage } from "../../src/storage/index.js";
import { build } from "../helpers/app.js";
import { copilotClient, transcript } from "../helpers/copilotkit.js";
import { openSse } from "../helpers/sse.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";

const ORIGIN = "https://app.example.com";
const ALL = "copilotkit-all-agents-key-0123";
const ONLY_ECHO = "copilotkit-echo-only-key-0123";

describe("the CopilotKit routes", () => {
  it("need an API key when keys are configured, and show a restricted key only its agents", async () => {
    const t = await buildServing({
      server: {
        auth: {
          keys: [
            { key: ALL, name: "ops" },
            { key: ONLY_ECHO, name: "web", agents: ["echo"] },
          ],
        },
      },
      agents: [echoAgent("echo"), echoAgent("secret")],
    });
    try {
      const base = await listen(t);
      expect((await fetch(`${base}/copilotkit/info`)).status).toBe(401);

      const web = await copilotClient(`${base}/copilotkit`, {
        authorization: `Bearer ${ONLY_ECHO}`,
      });
      expect(Object.keys(web.core.agents)).toEqual(["echo"]);
      const agent = web.agent("echo", randomUUID());
      agent.addMessage({ id: "k", role: "user", content: "with a key" });
      await web.core.runAgent({ agent });
      expect(transcript(agent).at(-1)).toEqual(["assistant", "with a key"]);

      const forbidden = await fetch(`${base}/copilotkit/agent/secret/run`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": ONLY_ECHO },
        body: JSON.stringify({ threadId: randomUUID(), runId: "r", messages: [] }),
      });
      expect(forbidden.status).toBe(403);

      // Each key is a user: its threads are its own.
      const ops = await copilotClient(`${base}/copilotkit`, { "x-api-key": ALL });
      expect(Object.keys(ops.core.agents).sort()).toEqual(["echo", "secret"]);
      const list = async (key: string) =>
        (
          (await (
            await fetch(`${base}/copilotkit/threads?agentId=echo`, {
              headers: { "x-api-key": key },
            })
          ).json()) as { threads: Array<{ id: string; createdById: string }> }
        ).threads;
      expect((await list(ONLY_ECHO)).map((thread) => thread.id)).toEqual([agent.threadId]);
      expect((await list(ONLY_ECHO))[0]!.createdById).toBe("key:web");
      expect(await list(ALL)).toEqual([]);
      const foreign = await fetch(`${base}/copilotkit/threads/${agent.threadId}/messages`, {
        headers: { "x-api-key": ALL },
      });
      expect(foreign.status).toBe(404);
    } finally {
      await t.close();
    }
  });

  it("keep each key's threads its own: another key connects to nothing, stops nothing, reads nothing", async () => {
    const ADMIN = "copilotkit-admin-key-012345678";
    const t = await buildServing({
      server: {
        auth: {
          keys: [
            { key: ALL, name: "ops" },
            { key: ONLY_ECHO, name: "web" },
            { key: ADMIN, name: "root", admin: true },
          ],
        },
      },
      agents: [echoAgent("echo")],
    });
    try {
      const base = await listen(t);
      const threadId = randomUUID();
      const web = await copilotClient(`${base}/copilotkit`, { "x-api-key": ONLY_ECHO });
      const agent = web.agent("echo", threadId);
      agent.addMessage({ id: "w1", role: "user", content: "mine only" });
      await web.core.runAgent({ agent });

      const post = (path: string, key: string, body: unknown) =>
        fetch(`${base}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: JSON.stringify(body),
        });
      const connectBody = { threadId, runId: randomUUID(), messages: [] };
      const connected = async (path: string, key: string) => {
        const response = await post(path, key, connectBody);
        expect(response.status).toBe(200);
        return response.text();
      };
      // The owner's connect replays the thread; another key's is an unknown thread's: empty.
      expect(await connected("/copilotkit/agent/echo/connect", ONLY_ECHO)).toContain("mine only");
      expect(await connected("/copilotkit/agent/echo/connect", ALL)).toBe("");
      expect(await connected("/ag-ui/echo/connect", ALL)).toBe("");
      const stop = await post(`/copilotkit/agent/echo/stop/${threadId}`, ALL, {});
      expect(((await stop.json()) as { stopped: boolean }).stopped).toBe(false);
      for (const view of ["messages", "state", "events"]) {
        const foreign = await fetch(`${base}/copilotkit/threads/${threadId}/${view}`, {
          headers: { "x-api-key": ALL },
        });
        expect(foreign.status).toBe(404);
      }
      const rename = await fetch(`${base}/copilotkit/threads/${threadId}`, {
        method: "PATCH",
        headers: { "content-type": "application/json", "x-api-key": ALL },
        body: JSON.stringify({ agentId: "echo", name: "taken" }),
      });
      expect(rename.status).toBe(404);
      // A run on it by another key is answered as on a thread nobody used: a conversation of
      // that key's own, which leaves the owner's thread untouched.
      const intruder = await post("/copilotkit/agent/echo/run", ALL, {
        threadId,
        runId: randomUUID(),
        messages: [{ id: "o1", role: "user", content: "someone else" }],
      });
      expect(intruder.status).toBe(200);
      expect(await connected("/copilotkit/agent/echo/connect", ONLY_ECHO)).not.toContain(
        "someone else",
      );
      // An admin key reads the owner's thread through ACP.
      const acpThreadId = (await (
        await fetch(`${base}/threads/search`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": ADMIN },
          body: JSON.stringify({ metadata: { copilotkit: { agent: "echo", user: "key:web" } } }),
        })
      ).json()) as Array<{ thread_id: string }>;
      expect(acpThreadId).toHaveLength(1);
    } finally {
      await t.close();
    }
  });

  it("answer a browser app on an allowed origin, preflight and stream alike", async () => {
    const t = await buildServing({
      server: { cors: { origins: [ORIGIN] } },
      agents: [echoAgent()],
    });
    try {
      const base = await listen(t);
      const preflight = await fetch(`${base}/copilotkit/agent/echo/run`, {
        method: "OPTIONS",
        headers: {
          origin: ORIGIN,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
      expect(preflight.status).toBeLessThan(300);
      expect(preflight.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      const stream = await fetch(`${base}/copilotkit/agent/echo/run`, {
        method: "POST",
        headers: { origin: ORIGIN, "content-type": "application/json" },
        body: JSON.stringify({
          threadId: randomUUID(),
          runId: "r",
          messages: [{ id: "m", role: "user", content: "cross origin" }],
        }),
      });
      expect(stream.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(await stream.text()).toContain("cross origin");
    } finally {
      await t.close();
    }
  });

  it("count as streams against server.limits.maxOpenStreams", async () => {
    const t = await buildServing({
      server: { limits: { maxOpenStreams: 1 } },
      agents: [echoAgent("slow", { adapter: { type: "echo", delayMs: 50 } })],
    });
    try {
      const base = await listen(t);
      const threadId = randomUUID();
      const run = await openSse(base, "/copilotkit/agent/slow/run", {
        body: {
          threadId,
          runId: "r",
          messages: [{ id: "m", role: "user", content: "a b c d e f g" }],
        },
      });
      await run.frame(1);
      const refused = await fetch(`${base}/copilotkit/agent/slow/connect`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ threadId, runId: "c", messages: [] }),
      });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("1");
      await run.ended;
    } finally {
      await t.close();
    }
  });

  it("live under the configured base path, and are gone when turned off", async () => {
    const moved = await buildServing({
      server: { copilotkit: { basePath: "/api/copilot" } },
      agents: [echoAgent()],
    });
    const off = await buildServing({
      server: { copilotkit: { enabled: false } },
      agents: [echoAgent()],
    });
    try {
      expect((await moved.app.inject({ url: "/api/copilot/info" })).statusCode).toBe(200);
      expect((await moved.app.inject({ url: "/copilotkit/info" })).statusCode).toBe(404);
      expect((await off.app.inject({ url: "/copilotkit/info" })).statusCode).toBe(404);
    } finally {
      await moved.close();
      await off.close();
    }
    await expect(
      parseConfig(
        'server: { copilotkit: { basePath: "copilot/" } }\nagents: [{ name: a, version: "1", description: d, adapter: { type: echo } }]',
        { filename: "bad.yaml", baseDir: process.cwd() },
      ),
    ).rejects.toThrow(/server\.copilotkit\.basePath must be a path such as \/copilotkit/);
    await expect(
      parseConfig(
        'server: { copilotkit: { basePath: "/threads/copilot" } }\nagents: [{ name: a, version: "1", description: d, adapter: { type: echo } }]',
        { filename: "bad.yaml", baseDir: process.cwd() },
      ),
    ).rejects.toThrow(/not under \/agents, \/threads/);
  });

  it("keep a conversation across a server restart", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "acp-copilotkit-")), "threads.db");
    const threadId = randomUUID();
    const first = createStorage(file);
    const before = await build({ storage: first });
    try {
      const client = await copilotClient(`${await listen(before)}/copilotkit`);
      const agent = client.agent("echo", threadId);
      agent.addMessage({ id: "r-1", role: "user", content: "before the restart" });
      await client.core.runAgent({ agent });
    } finally {
      await before.close();
      await first.close();
    }

    const second = createStorage(file);
    const after = await build({ storage: second });
    try {
      const client = await copilotClient(`${await listen(after)}/copilotkit`);
      const agent = client.agent("echo", threadId);
      await client.core.connectAgent({ agent });
      expect(transcript(agent)).toEqual([
        ["user", "before the restart"],
        ["assistant", "before the restart"],
      ]);
      agent.addMessage({ id: "r-2", role: "user", content: "after it" });
      await client.core.runAgent({ agent });
      expect(transcript(agent).map(([, text]) => text)).toEqual([
        "before the restart",
        "before the restart",
        "after it",
        "after it",
      ]);
    } finally {
      await after.close();
      await second.close();
    }
  });
});

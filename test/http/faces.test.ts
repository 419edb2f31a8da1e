import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { agentIdFor } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";

/** One request a face answers when it is on: [method, url, body]. */
const FACE_REQUESTS = {
  acp: ["POST", "/agents/search", {}],
  agui: ["GET", "/ag-ui/echo/capabilities", undefined],
  copilotkit: ["GET", "/copilotkit/info", undefined],
  a2a: ["GET", "/a2a/echo/.well-known/agent-card.json", undefined],
} as const;

describe("each face switched by its settings section", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function status(app: TestApp, face: keyof typeof FACE_REQUESTS): Promise<number> {
    const [method, url, body] = FACE_REQUESTS[face];
    const res = await app.app.inject({ method, url, ...(body ? { payload: body } : {}) });
    return res.statusCode;
  }

  it("every face answers by default", async () => {
    t = await build();
    for (const face of Object.keys(FACE_REQUESTS) as (keyof typeof FACE_REQUESTS)[]) {
      expect(await status(t, face), face).toBe(200);
    }
  });

  for (const face of Object.keys(FACE_REQUESTS) as (keyof typeof FACE_REQUESTS)[]) {
    it(`${face}.enabled: false › that face's routes are gone, the others and the probes stay`, async () => {
      t = await build({ settings: { [face]: { ...DEFAULT_SETTINGS[face], enabled: false } } });
      expect(await status(t, face)).toBe(404);
      for (const other of Object.keys(FACE_REQUESTS) as (keyof typeof FACE_REQUESTS)[]) {
        if (other !== face) expect(await status(t, other), other).toBe(200);
      }
      expect((await t.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
      expect((await t.app.inject({ method: "GET", url: "/openapi.json" })).statusCode).toBe(200);
    });
  }
});

describe("agui.basePath", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("moves the by-name endpoints; the by-id ones stay under /agents/{id}/ag-ui", async () => {
    t = await build({ settings: { agui: { enabled: true, basePath: "/api/agui" } } });
    const moved = await t.app.inject({ url: "/api/agui/echo/capabilities" });
    expect(moved.statusCode).toBe(200);
    expect(moved.json().custom).toMatchObject({
      connect: { method: "POST", path: "/api/agui/echo/connect" },
      stop: { method: "POST", path: "/api/agui/echo/stop/{threadId}" },
    });
    expect((await t.app.inject({ url: "/ag-ui/echo/capabilities" })).statusCode).toBe(404);
    const byId = `/agents/${agentIdFor("echo", "1.0.0")}/ag-ui/capabilities`;
    expect((await t.app.inject({ url: byId })).statusCode).toBe(200);
    const run = await t.app.inject({
      method: "POST",
      url: "/api/agui/echo",
      payload: { threadId: "moved", runId: "r", messages: [] },
    });
    expect(run.statusCode).toBe(200);
    expect(run.body).toContain("RUN_FINISHED");
  });

  it("a run at the moved path is a stream: counted against server.limits.maxOpenStreams", async () => {
    t = await build({
      settings: {
        agui: { enabled: true, basePath: "/api/agui" },
        limits: { ...DEFAULT_SETTINGS.limits, maxOpenStreams: 0 },
      },
    });
    const refused = await t.app.inject({
      method: "POST",
      url: "/api/agui/echo",
      payload: { threadId: "moved", runId: "r", messages: [] },
    });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatch(/too many open streams/);
  });

  it("defaults to /ag-ui; another face's path or the ACP paths are refused", async () => {
    const agents = 'agents: [{ name: a, version: "1", description: d, adapter: { type: echo } }]';
    const parse = (server: string) =>
      parseConfig(`server: ${server}\n${agents}`, { filename: "c.yaml", baseDir: process.cwd() });
    expect(DEFAULT_SETTINGS.agui).toEqual({ enabled: true, basePath: "/ag-ui" });
    expect((await parse('{ agui: { basePath: "/ag-ui" } }')).server?.agui).toMatchObject({
      basePath: "/ag-ui",
    });
    await expect(parse('{ agui: { basePath: "/agents/ui" } }')).rejects.toThrow(
      /server\.agui\.basePath must be a path such as \/ag-ui \(no trailing slash, not under \/agents, \/threads, \/runs, \/schemas/,
    );
    await expect(parse('{ copilotkit: { basePath: "/ag-ui/ck" } }')).rejects.toThrow(
      /not under \/agents, \/threads, \/runs, \/ag-ui/,
    );
  });
});

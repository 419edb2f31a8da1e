import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";

describe("GET / and the 404s under a face", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("GET / › sends a browser to the inspector, without an API key", async () => {
    t = await build({
      settings: { auth: { keys: [{ key: "a-key-long-enough-for-the-server-1234", name: "k" }] } },
    });
    const res = await t.app.inject({ method: "GET", url: "/" });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe("/ui/");
  });

  it("GET / without the inspector › says what is served where", async () => {
    t = await build({ settings: { inspector: { ...DEFAULT_SETTINGS.inspector, enabled: false } } });
    const res = await t.app.inject({ method: "GET", url: "/" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      service: "acp-agui",
      openapi: "/openapi.json",
      faces: [
        { face: "ACP", path: "/" },
        { face: "AG-UI", path: "/ag-ui/{agent}" },
        { face: "CopilotKit", path: "/copilotkit" },
        { face: "A2A", path: "/a2a/{agent}" },
        { face: "LangGraph", path: "/langgraph" },
        { face: "MCP", path: "/mcp" },
      ],
    });
  });

  it.each([
    ["GET", "/ag-ui", "POST /ag-ui/{agent} (a run)"],
    ["GET", "/ag-ui/echo/nothing/here", "POST /ag-ui/{agent}/connect"],
    ["POST", "/copilotkit/nope", "set your app's runtimeUrl to /copilotkit"],
  ])("%s %s › a 404 that says where that face's routes are", async (method, url, says) => {
    t = await build();
    const res = await t.app.inject({ method: method as "GET", url, payload: undefined });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toContain(`no route for ${method} ${url}: `);
    expect(res.json()).toContain(says);
  });

  it("a path under no face › the plain 404", async () => {
    t = await build();
    const res = await t.app.inject({ method: "GET", url: "/ag-uix" });
    expect(res.json()).toBe("no route for GET /ag-uix");
  });
});

import { describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { buildServing, echoAgent } from "./helpers.js";

const ORIGIN = "https://app.example.com";
const KEY = "cors-test-key-0123456789";
const echo = agentIdFor("echo", "1.0.0");

describe("CORS", () => {
  it("is off by default: no access-control headers, even for a browser origin", async () => {
    const t = await buildServing({ agents: [echoAgent()] });
    try {
      const res = await t.app.inject({
        method: "GET",
        url: "/healthz",
        headers: { origin: ORIGIN },
      });
      expect(res.headers["access-control-allow-origin"]).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it("answers an allowed origin and exposes content-location and x-acp-run-id", async () => {
    const t = await buildServing({
      server: { cors: { origins: [ORIGIN] } },
      agents: [echoAgent()],
    });
    try {
      const res = await t.app.inject({
        method: "POST",
        url: "/threads",
        payload: {},
        headers: { origin: ORIGIN },
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers["access-control-allow-origin"]).toBe(ORIGIN);
      const exposed = String(res.headers["access-control-expose-headers"]);
      expect(exposed).toContain("content-location");
      expect(exposed).toContain("x-acp-run-id");

      const stranger = await t.app.inject({
        method: "GET",
        url: "/healthz",
        headers: { origin: "https://evil.example" },
      });
      expect(stranger.headers["access-control-allow-origin"]).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it("answers a preflight without an API key, allowing the key and Last-Event-ID headers", async () => {
    const t = await buildServing({
      server: { cors: { origins: [ORIGIN] }, auth: { keys: [{ key: KEY, name: "web" }] } },
      agents: [echoAgent()],
    });
    try {
      const res = await t.app.inject({
        method: "OPTIONS",
        url: `/agents/${echo}/ag-ui`,
        headers: {
          origin: ORIGIN,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type, authorization, last-event-id",
        },
      });
      expect(res.statusCode).toBe(204);
      expect(res.headers["access-control-allow-origin"]).toBe(ORIGIN);
      const allowed = String(res.headers["access-control-allow-headers"]);
      for (const header of ["authorization", "x-api-key", "last-event-id", "content-type"]) {
        expect(allowed).toContain(header);
      }
      // The request itself still needs the key.
      const unauthorised = await t.app.inject({
        method: "POST",
        url: "/threads",
        payload: {},
        headers: { origin: ORIGIN },
      });
      expect(unauthorised.statusCode).toBe(401);
      expect(unauthorised.headers["access-control-allow-origin"]).toBe(ORIGIN);
    } finally {
      await t.close();
    }
  });

  it("streams carry the CORS headers too (ACP SSE and the AG-UI face write the raw response)", async () => {
    const t = await buildServing({ server: { cors: { origins: ["*"] } }, agents: [echoAgent()] });
    try {
      const sse = await t.app.inject({
        method: "POST",
        url: "/runs/stream",
        payload: { input: { messages: [{ role: "user", content: "hi" }] } },
        headers: { origin: ORIGIN },
      });
      expect(sse.headers["content-type"]).toContain("text/event-stream");
      expect(sse.headers["access-control-allow-origin"]).toBe("*");
      expect(String(sse.headers["access-control-expose-headers"])).toContain("content-location");

      const agui = await t.app.inject({
        method: "POST",
        url: "/ag-ui/echo",
        payload: { threadId: "web-1", runId: "r-1", messages: [], tools: [], context: [] },
        headers: { origin: ORIGIN },
      });
      expect(agui.headers["content-type"]).toContain("text/event-stream");
      expect(agui.headers["access-control-allow-origin"]).toBe("*");
      expect(agui.headers["x-acp-run-id"]).toBeDefined();
    } finally {
      await t.close();
    }
  });
});

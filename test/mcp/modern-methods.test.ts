/**
 * MCP 2026-07-28 on the endpoint's other HTTP methods: that revision has no sessions and no
 * standalone stream, so GET and DELETE from a client naming it answer 405 with `Allow: POST`
 * (Streamable HTTP, Backward Compatibility); a 2025 client without a session is still told to
 * initialize. The 2026 client works on the same endpoint all the while.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { textOf } from "./helpers.js";
import { MODERN, modernClient } from "./modern-helpers.js";

describe("MCP 2026-07-28: GET and DELETE", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ["GET", "/mcp"],
    ["DELETE", "/mcp"],
    ["GET", "/mcp/echo"],
    ["DELETE", "/mcp/echo@1.0.0"],
  ])("%s %s naming 2026-07-28 answers 405 with Allow: POST", async (method, path) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { accept: "text/event-stream", "mcp-protocol-version": MODERN },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
    const body = (await response.json()) as {
      jsonrpc: string;
      error: { code: number; message: string };
    };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.code).toBe(-32000);
    expect(body.error.message).toContain(`${method} is not allowed`);
  });

  it.each([["2025-11-25"], [undefined]])(
    "GET without a session naming %s is still told to initialize (400)",
    async (version) => {
      const response = await fetch(`${base}/mcp`, {
        headers: {
          accept: "text/event-stream",
          ...(version ? { "mcp-protocol-version": version } : {}),
        },
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
        /initialize/,
      );
    },
  );

  it("the 2026 client calls on the same endpoint", async () => {
    const client = await modernClient(`${base}/mcp`);
    expect(textOf(await client.callTool({ name: "echo", arguments: { message: "post" } }))).toBe(
      "post",
    );
    await client.close();
  });
});

/**
 * `@modelcontextprotocol/client` pinned to MCP 2026-07-28 against the built server as
 * `npm start` runs it (dist/cli.js, the sample agents): it discovers the server, lists the
 * tools and calls one, and answers approval-demo's question through an InputRequiredResult.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltServer, startBuiltServer } from "../inspector/server.js";
import { textOf } from "./helpers.js";
import { MODERN, modernClient } from "./modern-helpers.js";

describe("MCP 2026-07-28 against the built server", () => {
  let server: BuiltServer;
  beforeAll(async () => {
    server = await startBuiltServer();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("discovers, lists and calls; an interrupt is asked and answered on retry", async () => {
    const client = await modernClient(`${server.url}/mcp`, {
      capabilities: { elicitation: { form: {} } },
    });
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { approved: true },
    }));
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("echo");
    expect(textOf(await client.callTool({ name: "echo", arguments: { message: "built" } }))).toBe(
      "built",
    );
    const approved = await client.callTool({ name: "approval-demo", arguments: { message: "go" } });
    expect(textOf(approved)).toContain("Approved.");
    await client.close();
  }, 60_000);
});

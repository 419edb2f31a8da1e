import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { build, type TestApp } from "../helpers/app.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: echo
    version: 2.0.0
    description: A newer echo.
    adapter: { type: echo }
  - name: other
    version: 0.1.0
    description: Another agent.
    adapter: { type: echo }
`;

describe("agents", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build({ yaml: YAML });
  });
  afterAll(() => t.close());

  it("POST /agents/search › lists every agent for an empty body", async () => {
    const res = await t.call("POST", "/agents/search", {});
    expect(res.status).toBe(200);
    expect((res.body as unknown[]).length).toBe(3);
  });

  it("POST /agents/search › filters by name and version", async () => {
    const byName = await t.call("POST", "/agents/search", { name: "echo" });
    expect(
      (byName.body as Array<{ metadata: { ref: { version: string } } }>)
        .map((a) => a.metadata.ref.version)
        .sort(),
    ).toEqual(["1.0.0", "2.0.0"]);
    const exact = await t.call("POST", "/agents/search", { name: "echo", version: "2.0.0" });
    expect(exact.body).toEqual([
      {
        agent_id: agentIdFor("echo", "2.0.0"),
        metadata: { ref: { name: "echo", version: "2.0.0" }, description: "A newer echo." },
      },
    ]);
    const none = await t.call("POST", "/agents/search", { name: "missing" });
    expect(none.body).toEqual([]);
  });

  it("POST /agents/search › pages with limit and offset", async () => {
    const first = (await t.call("POST", "/agents/search", { limit: 2 })).body as unknown[];
    const rest = (await t.call("POST", "/agents/search", { limit: 2, offset: 2 }))
      .body as unknown[];
    expect(first.length).toBe(2);
    expect(rest.length).toBe(1);
  });

  it("GET /agents/{id} › returns the agent, with an id stable across restarts", async () => {
    const id = agentIdFor("other", "0.1.0");
    const res = await t.call("GET", `/agents/${id}`);
    expect(res.status).toBe(200);
    expect((res.body as { agent_id: string }).agent_id).toBe(id);
  });

  it("GET /agents/{id}/descriptor › returns the ACP descriptor with AG-UI defaults", async () => {
    const res = await t.call("GET", `/agents/${agentIdFor("echo", "1.0.0")}/descriptor`);
    expect(res.status).toBe(200);
    const specs = (res.body as { specs: Record<string, unknown> }).specs;
    expect(specs.capabilities).toMatchObject({
      threads: true,
      interrupts: true,
      streaming: { values: true, custom: true },
    });
    expect(specs.custom_streaming_update).toEqual({
      $ref: "/schemas/ag-ui.schema.json#/$defs/Event",
    });
  });

  it("GET /agents/{id} › 404 names the unknown agent", async () => {
    const id = "3f2b8f0e-1111-4222-8333-444455556666";
    const res = await t.call("GET", `/agents/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toBe(`agent ${id} not found`);
  });

  describe.each([
    ["limit of 0", { limit: 0 }, "body/limit must be >= 1"],
    ["limit above 1000", { limit: 1001 }, "body/limit must be <= 1000"],
    ["negative offset", { offset: -1 }, "body/offset must be >= 0"],
    ["name of the wrong type", { name: 5 }, "body/name must be string"],
    ["limit as a string", { limit: "10" }, "body/limit must be integer"],
    ["an array body", [], "body must be object"],
  ])("POST /agents/search › 422 for %s", (_label, payload, message) => {
    it("names the problem", async () => {
      const res = await t.call("POST", "/agents/search", payload);
      expect(res.status).toBe(422);
      expect(res.body).toContain(message);
    });
  });

  it("POST /agents/search › 400 for a body that is not JSON", async () => {
    const res = await t.call("POST", "/agents/search", "{not json", {
      "content-type": "application/json",
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatch(/not valid JSON/);
  });

  it("POST /agents/search › 415 for a body that is not JSON at all", async () => {
    const res = await t.call("POST", "/agents/search", "name=echo", {
      "content-type": "text/plain",
    });
    expect(res.status).toBe(415);
    expect(res.body).toBe(
      'content-type "text/plain" is not accepted: send a JSON body with content-type application/json',
    );
  });

  it("POST /agents/search › 415 for a body without a content type, saying what is expected", async () => {
    const res = await t.call("POST", "/agents/search", "{}");
    expect(res.status).toBe(415);
    expect(res.body).toBe(
      "the request has a body but no content-type: send a JSON body with content-type application/json",
    );
  });

  it.each([["/agents/not-a-uuid"], ["/agents/not-a-uuid/descriptor"]])(
    "GET %s › 422 names the malformed id",
    async (url) => {
      const res = await t.call("GET", url);
      expect(res.status).toBe(422);
      expect(res.body).toBe('params/agent_id must match format "uuid"');
    },
  );
});

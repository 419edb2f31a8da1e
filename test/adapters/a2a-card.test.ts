import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { type A2aTestAgent, startA2aAgent } from "../helpers/a2a-agents.js";
import { build, type TestApp } from "../helpers/app.js";

type Json = Record<string, unknown>;

describe("a2a adapter: the agent card is the descriptor", () => {
  let remote: A2aTestAgent;
  let restOnly: A2aTestAgent;
  let t: TestApp;
  const logged: Json[] = [];
  const agent = agentIdFor("carded", "1.0.0");
  const gone = agentIdFor("gone", "1.0.0");

  beforeAll(async () => {
    remote = await startA2aAgent({ name: "card-agent" });
    restOnly = await startA2aAgent({ bindings: ["HTTP+JSON"] });
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logged.push(JSON.parse(String(chunk)) as Json);
        done();
      },
    });
    t = await build({
      logger: pino({ level: "warn" }, sink),
      yaml: `
agents:
  - name: carded
    version: 1.0.0
    description: ""
    adapter: { type: a2a, url: ${remote.url}, cardRefreshSeconds: 1 }
  - name: wrong-binding
    version: 1.0.0
    description: Asks for a binding its card does not offer.
    adapter: { type: a2a, url: ${restOnly.url}, binding: jsonrpc }
  - name: gone
    version: 1.0.0
    description: Its card cannot be read.
    adapter: { type: a2a, url: "http://127.0.0.1:9/agent-card.json", connectTimeoutMs: 2000 }
`,
    });
  });
  afterAll(async () => {
    await t?.close();
    await remote?.close();
    await restOnly?.close();
  });

  it("GET /agents/{id}/descriptor › the card's description, URL, skills and modes", async () => {
    const res = await t.call("GET", `/agents/${agent}/descriptor`);
    expect(res.status).toBe(200);
    const body = res.body as { metadata: Json; specs: { input: Json; output: Json } };
    expect(body.metadata).toEqual({
      ref: { name: "carded", version: "1.0.0", url: remote.url },
      description: "A test agent built on the A2A SDK",
    });
    expect(body.specs.input["x-a2a-card"]).toMatchObject({
      name: "card-agent",
      version: "2.1.0",
      streaming: true,
      pushNotifications: false,
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain", "application/json"],
      skills: [{ id: "greet", name: "Greeting", examples: ["hello there"] }],
    });
    expect(body.specs.input.examples).toEqual([
      { messages: [{ role: "user", content: "hello there" }] },
    ]);
    expect(body.specs.input.description).toContain("text/plain");
    expect(body.specs.output.description).toContain("application/json");
    // The input schema still validates runs as before.
    expect(body.specs.input.properties).toHaveProperty("messages");
    const listed = (await t.call("GET", `/agents/${agent}`)).body as { metadata: Json };
    expect(listed.metadata.description).toBe("A test agent built on the A2A SDK");
  });

  it("the AG-UI face's agent info carries the card", async () => {
    const res = await t.app.inject({ method: "GET", url: "/ag-ui/carded/capabilities" });
    const body = res.json() as Json;
    if (res.statusCode !== 200) throw new Error(res.body);
    expect((body.identity as Json).description).toBe("A test agent built on the A2A SDK");
    expect((body.custom as Json).a2a).toMatchObject({ name: "card-agent", streaming: true });
  });

  it("the card is read again: a changed description reaches the descriptor", async () => {
    remote.describe("A test agent with a new description");
    await vi.waitFor(
      async () => {
        const res = await t.call("GET", `/agents/${agent}/descriptor`);
        expect((res.body as { metadata: Json }).metadata.description).toBe(
          "A test agent with a new description",
        );
      },
      { timeout: 10_000, interval: 200 },
    );
  });

  it("a binding the card does not offer › a warning and run errors naming what it offers", async () => {
    const expected = `the A2A agent at ${restOnly.url}: its agent card offers no JSONRPC interface (it offers: HTTP+JSON)`;
    expect(logged.map((line) => line.msg)).toContain(`a2a: ${expected}`);
    const res = await t.call("POST", "/runs/wait", {
      agent_id: agentIdFor("wrong-binding", "1.0.0"),
      input: { messages: [{ role: "user", content: "hello" }] },
    });
    const { run } = res.body as { run: { run_id: string; status: string } };
    expect(run.status).toBe("error");
    const stored = await t.storage.getRun(run.run_id);
    expect(stored!.output).toMatchObject({ description: `agent failed: ${expected}` });
  });

  it("an unreachable card › a start-up warning naming the agent; the descriptor is the config's", async () => {
    const warning = logged.find((line) => String(line.msg).includes("127.0.0.1:9"));
    expect(warning?.msg).toMatch(
      /^a2a: the A2A agent at http:\/\/127\.0\.0\.1:9\/agent-card\.json: its agent card could not be read: /,
    );
    const res = await t.call("GET", `/agents/${gone}/descriptor`);
    expect((res.body as { metadata: Json }).metadata).toEqual({
      ref: { name: "gone", version: "1.0.0" },
      description: "Its card cannot be read.",
    });
  });
});

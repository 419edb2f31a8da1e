/**
 * Keep-alives on CopilotKit's run streams: a run that stays silent gets `: keep-alive` comment
 * lines every `keepAliveSeconds`, as ACP and AG-UI face streams do, and CopilotKit's own client
 * (@copilotkit/core) reads the run from those very bytes.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { teeBody } from "../helpers/agui-client.js";
import { build, type TestApp } from "../helpers/app.js";
import { copilotClient, transcript } from "../helpers/copilotkit.js";
import { listen } from "../runs/helpers.js";

const YAML = `
agents:
  - name: quiet
    version: 1.0.0
    description: Echo that stays silent for 2.5 s before each word.
    adapter: { type: echo, delayMs: 2500 }
`;

/** Copies of the run responses' bytes (`…/agent/x/run`), as the client received them. */
const runBodies: Array<Promise<Buffer>> = [];
const clientFetch = globalThis.fetch;
globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const response = await clientFetch(input, init);
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (!/\/agent\/[^/]+\/run$/.test(new URL(url).pathname) || !response.body) return response;
  const copied = teeBody(response);
  runBodies.push(copied.bytes);
  return copied.response;
}) as typeof fetch;

describe("CopilotKit run streams › keep-alives", () => {
  let t: TestApp;
  let runtimeUrl: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, settings: { keepAliveSeconds: 1 } });
    runtimeUrl = `${await listen(t)}/copilotkit`;
  });
  afterAll(() => t.close());

  it("sends comment lines while the run is silent, and the client reads the run through them", async () => {
    const client = await copilotClient(runtimeUrl);
    const agent = client.agent("quiet", randomUUID());
    agent.addMessage({ id: "u-1", role: "user", content: "silence" });
    await client.core.runAgent({ agent });
    expect(transcript(agent)).toEqual([
      ["user", "silence"],
      ["assistant", "silence"],
    ]);
    expect(client.errors).toEqual([]);

    expect(runBodies).toHaveLength(1);
    const raw = (await runBodies[0]!).toString("utf8");
    expect((raw.match(/^: keep-alive$/gm) ?? []).length).toBeGreaterThanOrEqual(1);
    expect(raw).not.toContain(": keep-alive\n\n");
    expect(raw).not.toMatch(/^: keep-alive\n(?!: keep-alive\n|data: )/m);
    expect(raw.indexOf(": keep-alive")).toBeLessThan(raw.indexOf('"TEXT_MESSAGE_CONTENT"'));
  }, 15_000);
});

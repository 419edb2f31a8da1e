/**
 * Keep-alives on the AG-UI face: an SSE stream whose run is silent carries `: keep-alive`
 * comment lines every `keepAliveSeconds` (as ACP streams do), and `@ag-ui/client`'s HttpAgent
 * still reads the run from those very bytes. A protobuf stream has no frame that means nothing
 * (a comment line would be read as a length prefix), so it gets none and stays decodable.
 */
import { HttpAgent } from "@ag-ui/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProtoAgent, teeBody } from "../helpers/agui-client.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";

const YAML = `
agents:
  - name: quiet
    version: 1.0.0
    description: Echo that stays silent for 2.5 s before each word.
    adapter: { type: echo, delayMs: 2500 }
`;

/** A fetch that hands the client the response and keeps a copy of every byte it received. */
function recordingFetch(): { fetch: typeof fetch; bytes: () => Promise<Buffer> } {
  let bytes: Promise<Buffer> = Promise.resolve(Buffer.alloc(0));
  return {
    bytes: () => bytes,
    fetch: async (input, init) => {
      const copied = teeBody(await fetch(input, init));
      bytes = copied.bytes;
      return copied.response;
    },
  };
}

describe("the AG-UI face › keep-alives", () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, settings: { keepAliveSeconds: 1 } });
    url = `${await listen(t)}/ag-ui/quiet`;
  });
  afterAll(() => t.close());

  it("sends comment lines while the run is silent, and HttpAgent reads the run through them", async () => {
    const recorder = recordingFetch();
    const agent = new HttpAgent({ url, threadId: `idle-${Math.random()}`, fetch: recorder.fetch });
    agent.addMessage({ id: "u-1", role: "user", content: "silence" });
    const { newMessages } = await agent.runAgent({ runId: "idle-run" });
    expect(newMessages.map((m) => [m.role, (m as { content?: string }).content])).toEqual([
      ["assistant", "silence"],
    ]);

    const raw = (await recorder.bytes()).toString("utf8");
    const keepAlives = raw.match(/^: keep-alive$/gm) ?? [];
    expect(keepAlives.length).toBeGreaterThanOrEqual(1);
    // A lone comment line, as on ACP streams: followed by another one or by an event's data.
    expect(raw).not.toContain(": keep-alive\n\n");
    expect(raw).not.toMatch(/^: keep-alive\n(?!: keep-alive\n|data: )/m);
    // At least one came while the agent was silent, before the reply's first word.
    expect(raw.indexOf(": keep-alive")).toBeLessThan(raw.indexOf('"TEXT_MESSAGE_CONTENT"'));
  }, 15_000);

  it("sends none on a protobuf stream, which the client still decodes", async () => {
    const recorder = recordingFetch();
    const agent = new ProtoAgent({ url, threadId: `idle-${Math.random()}`, fetch: recorder.fetch });
    agent.addMessage({ id: "u-1", role: "user", content: "binary" });
    const { newMessages } = await agent.runAgent({ runId: "idle-proto-run" });
    expect(newMessages.map((m) => [m.role, (m as { content?: string }).content])).toEqual([
      ["assistant", "binary"],
    ]);
    const bytes = await recorder.bytes();
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.includes(Buffer.from(": keep-alive"))).toBe(false);
    // Every byte belongs to a length-prefixed frame: the frames add up to the whole body.
    let at = 0;
    while (at + 4 <= bytes.length) at += 4 + bytes.readUInt32BE(at);
    expect(at).toBe(bytes.length);
  }, 15_000);
});

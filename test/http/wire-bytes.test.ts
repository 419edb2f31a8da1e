import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonAnswer, wireChunk } from "../../src/http/wire-bytes.js";
import { build, type TestApp } from "../helpers/app.js";

// Long enough to be sent as bytes, with characters of one, two, three and four UTF-8 bytes
// (a surrogate pair among them) and the line breaks ACP SSE escapes.
const LONG = `a é € 😀 \u2028 ${"long answer ".repeat(12_000)} fin 😀`;

describe("long answers go to the socket as UTF-8 bytes", () => {
  it("a long string becomes its UTF-8 bytes; a short one and bytes stay as they are", () => {
    const bytes = wireChunk(LONG);
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect((bytes as Buffer).toString("utf8")).toBe(LONG);
    expect(wireChunk("short é")).toBe("short é");
    const given = new Uint8Array([1, 2, 3]);
    expect(wireChunk(given)).toBe(given);
  });

  it("a long JSON answer is streamed as the exact bytes of JSON.stringify, its length known", async () => {
    const small = { run: { status: "success" }, output: { messages: [{ content: "hi" }] } };
    expect(jsonAnswer(small)).toBe(JSON.stringify(small));
    const large = {
      run: { status: "success" },
      output: { messages: [{ content: LONG }, { content: LONG }] },
    };
    const body = jsonAnswer(large);
    expect(typeof body).not.toBe("string");
    const chunks: string[] = [];
    for await (const chunk of body as AsyncIterable<string>) chunks.push(chunk);
    const bytes = Buffer.from(chunks.join(""), "utf8");
    expect(bytes.equals(Buffer.from(JSON.stringify(large), "utf8"))).toBe(true);
    expect((body as { contentLength: number }).contentLength).toBe(bytes.length);
    // Pulled in pieces, not handed over whole.
    expect(chunks.length).toBeGreaterThan(2);
  });

  it("cuts off a long answer whose value changed after its length was counted", async () => {
    const output = { messages: [{ content: LONG }] };
    const body = jsonAnswer({ output }) as AsyncIterable<string>;
    output.messages.push({ content: "one more" });
    const read = async () => {
      for await (const _ of body) {
        // drained
      }
    };
    await expect(read()).rejects.toThrow(/the answer changed while it was sent/);
  });

  describe("over a real socket", () => {
    let t: TestApp;
    let origin: string;
    beforeAll(async () => {
      t = await build();
      origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    });
    afterAll(() => t.close());

    const agentId = async () => {
      const res = await fetch(`${origin}/agents/search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      return ((await res.json()) as { agent_id: string }[])[0]!.agent_id;
    };
    const runBody = async (extra: Record<string, unknown> = {}) =>
      JSON.stringify({
        agent_id: await agentId(),
        input: { messages: [{ role: "user", content: LONG }] },
        ...extra,
      });

    it("a JSON answer: the exact bytes, with a Content-Length that counts them", async () => {
      const res = await fetch(`${origin}/runs/wait`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: await runBody(),
      });
      expect(res.status).toBe(200);
      const raw = Buffer.from(await res.arrayBuffer());
      expect(Number(res.headers.get("content-length"))).toBe(raw.length);
      expect(res.headers.get("transfer-encoding")).toBeNull();
      const body = JSON.parse(raw.toString("utf8")) as {
        output: { messages: { content: unknown }[] };
      };
      const last = body.output.messages.at(-1)!.content;
      expect(typeof last === "string" ? last : JSON.stringify(last)).toContain(LONG);
    });

    it("a stream: the frames' data is the same JSON, on one line each", async () => {
      const res = await fetch(`${origin}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: await runBody({ stream_mode: ["values"] }),
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      const data = text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => JSON.parse(line.slice(6)) as { status: string; values: unknown });
      const final = data.at(-1)!;
      expect(final.status).toBe("success");
      expect(JSON.stringify(data)).toContain(JSON.stringify(LONG).slice(1, -1));
    });
  });
});

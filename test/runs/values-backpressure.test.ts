/**
 * A values stream to a client that cannot keep up: the values frames written while the socket is
 * still sending earlier ones are skipped (each is superseded by the next, and the final frame
 * carries the values), while every event still arrives, in order, and every values frame that
 * does arrive is the state at its place in the log.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readUpdate } from "../../src/engine/frames/codec.js";
import type { TestApp } from "../helpers/app.js";
import { agentId, buildWith, type Event, type Json, listen, started, until } from "./helpers.js";

const CHUNK = "y".repeat(20_000);
const CHUNKS = 150;
const script: Event[] = [
  started,
  { type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" },
  ...Array.from({ length: CHUNKS }, () => ({
    type: "TEXT_MESSAGE_CONTENT",
    messageId: "m",
    delta: CHUNK,
  })),
  { type: "TEXT_MESSAGE_END", messageId: "m" },
  { type: "RUN_FINISHED", threadId: "t", runId: "r" },
];

interface Frame {
  id: number;
  event: string;
  data: Json;
}

/** Opens the stream, reads nothing until `hold` resolves, then reads it to its end. */
function pausedStream(origin: string, body: Json, hold: (runId: string) => Promise<void>) {
  return new Promise<Frame[]>((resolve, reject) => {
    const req = request(`${origin}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      res.pause();
      const location = String(res.headers["content-location"]);
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const frames = Buffer.concat(chunks)
          .toString("utf8")
          .split("\n\n")
          .filter((block) => block.includes("data: "))
          .map((block) => {
            const line = (prefix: string) =>
              block
                .split("\n")
                .find((l) => l.startsWith(prefix))!
                .slice(prefix.length);
            return {
              id: Number(line("id: ")),
              event: line("event: "),
              data: JSON.parse(line("data: ")) as Json,
            };
          });
        resolve(frames);
      });
      hold(location.split("/").at(-1)!).then(
        () => res.resume(),
        (err) => reject(err),
      );
    });
    req.end(JSON.stringify(body));
  });
}

const textOf = (data: Json) => {
  const messages = (data.messages ?? []) as { role: string; content?: unknown }[];
  const last = messages.filter((m) => m.role === "assistant").at(-1)?.content;
  return typeof last === "string" ? last : "";
};

/** Long states (each values frame over 64 K characters) from an agent that takes its time. */
const PACED_CHUNK = "z".repeat(70_000);
const pacedScript: Event[] = [
  started,
  { type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" },
  ...Array.from({ length: 4 }, () => ({
    type: "TEXT_MESSAGE_CONTENT",
    messageId: "m",
    delta: PACED_CHUNK,
  })),
  { type: "TEXT_MESSAGE_END", messageId: "m" },
  { type: "RUN_FINISHED", threadId: "t", runId: "r" },
];

describe("a values stream to a client that cannot keep up", () => {
  let t: TestApp;
  let origin: string;
  beforeAll(async () => {
    t = await buildWith([
      { name: "long", script, delayMs: 1 },
      { name: "paced", script: pacedScript, delayMs: 50 },
    ]);
    origin = await listen(t);
  });
  afterAll(() => t.close());

  it("skips the values frames it could not send yet; every event and the final values arrive", async () => {
    const frames = await pausedStream(
      origin,
      { agent_id: agentId("long"), stream_mode: ["values", "custom"] },
      // The client reads nothing until the run is over.
      async (runId) => {
        await until(
          () => t.storage.getRun(runId),
          (run) => run?.status !== "pending",
          20_000,
          "the run's end",
        );
      },
    );
    const runId = String(frames[0]!.data.run_id);
    const stored = await t.storage.readFrames(runId, 0);
    const storedValues = stored.filter((f) => f.mode === "values");
    const custom = frames.filter((f) => f.data.type === "custom");
    const values = frames.filter((f) => f.data.type === "values");
    const final = values.at(-1)!;

    // Every event, in order.
    expect(custom.map((f) => f.id)).toEqual(
      stored.filter((f) => f.mode === "custom").map((f) => f.seq),
    );
    expect(custom.map((f) => f.data.update)).toEqual(
      stored.filter((f) => f.mode === "custom").map((f) => readUpdate(f)),
    );
    // The final frame carries the whole answer.
    expect(final.data.status).toBe("success");
    expect(textOf(final.data)).toBe(CHUNK.repeat(CHUNKS));
    // Values frames were skipped while the socket was full...
    const sentValues = values.slice(0, -1);
    expect(storedValues.length).toBeGreaterThan(CHUNKS / 2);
    expect(sentValues.length).toBeLessThan(storedValues.length);
    // ...and each one sent is the state at its place: the text of the events before it.
    for (const frame of sentValues) {
      const before = custom.filter((f) => f.id < frame.id);
      const text = before
        .map((f) => f.data.update as Json)
        .filter((u) => u.type === "TEXT_MESSAGE_CONTENT")
        .map((u) => u.delta)
        .join("");
      expect(textOf(frame.data)).toBe(text);
    }
    // The ids keep the log's order with no frame twice.
    const ids = frames.map((f) => f.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("sends a client that keeps up every values frame of a long state, in pieces, each the state at its place", async () => {
    const frames = await pausedStream(
      origin,
      { agent_id: agentId("paced"), stream_mode: ["values", "custom"] },
      async () => {},
    );
    const runId = String(frames[0]!.data.run_id);
    const stored = await t.storage.readFrames(runId, 0);
    const values = frames.filter((f) => f.data.type === "values");
    const sentValues = values.slice(0, -1);
    expect(sentValues.map((f) => f.id)).toEqual(
      stored.filter((f) => f.mode === "values").map((f) => f.seq),
    );
    const custom = frames.filter((f) => f.data.type === "custom");
    for (const frame of sentValues) {
      const deltas = custom
        .filter((f) => f.id < frame.id)
        .map((f) => f.data.update as Json)
        .filter((u) => u.type === "TEXT_MESSAGE_CONTENT");
      expect(textOf(frame.data)).toBe(PACED_CHUNK.repeat(deltas.length));
    }
    expect(textOf(values.at(-1)!.data)).toBe(PACED_CHUNK.repeat(4));
  });
});

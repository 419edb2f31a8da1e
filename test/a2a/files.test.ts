/**
 * Files both ways on the A2A face, with the official client (`@a2a-js/sdk`) over both bindings:
 * a client's `raw` and `url` parts reach the agent as AG-UI media parts, a tool result made of
 * parts reaches the client as a file artifact (streams and tasks alike), the card says which
 * media types each agent takes, and a part the agent does not take, or too large, is refused.
 */
import { randomUUID } from "node:crypto";
import { Message, type Part, TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";
import { OpenAiTestServer, textStream } from "../helpers/openai-server.js";
import { listen } from "../runs/helpers.js";
import { a2aClient, asTask, BINDINGS, collect } from "./helpers.js";
import { ofTask, receiver, stateOf, until } from "./push-helpers.js";

const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const PNG_BYTES = Buffer.from(PNG_BASE64, "base64").length;

// biome-ignore lint/suspicious/noExplicitAny: the wire's JSON, read freely by the assertions
type Wire = any;
type Inputs = { messages: { role: string; content: unknown }[] }[];
const inputs = () => ((globalThis as { __mediaAgentInputs?: Inputs }).__mediaAgentInputs ??= []);

const fileMessage = (parts: unknown[]) =>
  Message.fromJSON({ messageId: randomUUID(), role: "ROLE_USER", parts });

/** A part as the client reads it, back in ProtoJSON. */
const wire = (parts: Part[] | undefined) => (parts ?? []).map((part) => toJson(part));
function toJson(part: Part): Wire {
  const { content, filename, mediaType } = part;
  const out: Wire = {};
  if (content?.$case === "raw") out.raw = Buffer.from(content.value).toString("base64");
  else if (content) out[content.$case] = content.value;
  if (filename) out.filename = filename;
  if (mediaType) out.mediaType = mediaType;
  return out;
}

describe("A2A files", () => {
  let t: TestApp;
  let base: string;
  let openai: OpenAiTestServer;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    openai = await OpenAiTestServer.start();
    hooks = await receiver();
    t = await build({
      unchecked: true,
      settings: {
        webhooks: { ...DEFAULT_SETTINGS.webhooks, allowPrivateTargets: true, maxAttempts: 3 },
      },
      baseDir: `${process.cwd()}/test/fixtures/modules`,
      yaml: `
agents:
  - name: media
    version: 1.0.0
    description: Describes the files it gets; draws a chart.
    adapter: { type: module, path: ./media-agent.mjs }
  - name: echo
    version: 1.0.0
    description: Echoes text.
    adapter: { type: echo }
  - name: vision
    version: 1.0.0
    description: A vision model.
    adapter: { type: openai, baseUrl: ${openai.baseUrl}, model: gpt-4o }
  - name: small
    version: 1.0.0
    description: Takes small PNGs only.
    adapter: { type: module, path: ./media-agent.mjs }
    a2a: { inputModes: [text/plain, image/png], maxPartBytes: 100, maxMessageBytes: 150 }
`,
    });
    base = await listen(t);
  });
  afterAll(async () => {
    await t?.close();
    await openai?.close();
    await hooks?.close();
  });
  beforeEach(() => {
    inputs().length = 0;
  });

  const rpc = async (agent: string, method: string, params: unknown) => {
    const response = await fetch(`${base}/a2a/${agent}`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return (await response.json()) as Wire;
  };

  it("says in each card which media types the agent takes and gives", async () => {
    const card = async (agent: string) =>
      (await (await fetch(`${base}/a2a/${agent}/.well-known/agent-card.json`)).json()) as Wire;
    const modes = (c: Wire) => [c.defaultInputModes, c.skills[0].inputModes];
    expect(modes(await card("echo"))).toEqual(Array(2).fill(["text/plain", "application/json"]));
    expect((await card("vision")).defaultInputModes).toEqual([
      "text/plain",
      "application/json",
      "image/*",
    ]);
    expect((await card("media")).defaultInputModes).toContain("*/*");
    expect(modes(await card("small"))).toEqual(Array(2).fill(["text/plain", "image/png"]));
    const legacy = (await (await fetch(`${base}/a2a/small/.well-known/agent.json`)).json()) as Wire;
    expect(legacy.defaultInputModes).toEqual(["text/plain", "image/png"]);
  });

  it.each(BINDINGS)(
    "hands a client's raw and url parts to the agent as AG-UI media parts (%s)",
    async (binding) => {
      const client = await a2aClient(base, "media", binding);
      const task = asTask(
        await client.sendMessage({
          message: fileMessage([
            { text: "look" },
            { raw: PNG_BASE64, mediaType: "image/png", filename: "photo.png" },
            { url: "https://files.example.com/report.pdf", mediaType: "application/pdf" },
          ]),
        } as never),
      );
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const content = inputs()[0]!.messages.at(-1)!.content;
      expect(content).toEqual([
        { type: "text", text: "look" },
        {
          type: "image",
          source: { type: "data", value: PNG_BASE64, mimeType: "image/png" },
          metadata: { filename: "photo.png" },
        },
        {
          type: "document",
          source: {
            type: "url",
            value: "https://files.example.com/report.pdf",
            mimeType: "application/pdf",
          },
        },
      ]);
      // The agent saw the bytes; the task's history gives the client its own parts back.
      const said = task.artifacts
        .flatMap((a) => wire(a.parts))
        .map((p) => p.text)
        .join("");
      expect(said).toContain(`got image image/png photo.png data ${PNG_BYTES} bytes`);
      const sent = wire(task.history.find((m) => m.role === 1)?.parts);
      expect(sent).toEqual([
        { text: "look" },
        { raw: PNG_BASE64, mediaType: "image/png", filename: "photo.png" },
        { url: "https://files.example.com/report.pdf", mediaType: "application/pdf" },
      ]);
    },
  );

  it.each(BINDINGS)(
    "sends a tool's media result as a file artifact, streamed and read back (%s)",
    async (binding) => {
      const client = await a2aClient(base, "media", binding);
      const events = await collect(
        client.sendMessageStream({ message: fileMessage([{ text: "picture" }]) } as never),
      );
      const toolArtifact = events.flatMap((event) =>
        event.payload?.$case === "artifactUpdate" &&
        event.payload.value.artifact?.artifactId.startsWith("tool-")
          ? [event.payload.value.artifact]
          : [],
      );
      expect(toolArtifact).toHaveLength(1);
      const expected = [
        { data: { toolCallId: expect.any(String), name: "draw_chart", args: { kind: "bar" } } },
        { text: "a bar chart" },
        { raw: PNG_BASE64, mediaType: "image/png", filename: "chart.png" },
        { url: "https://files.example.com/r.pdf" },
      ];
      expect(toolArtifact[0]!.name).toBe("draw_chart");
      expect(wire(toolArtifact[0]!.parts)).toEqual(expected);
      const taskId = events[0]?.payload?.$case === "task" ? events[0].payload.value.id : "";
      const task = await client.getTask({ id: taskId } as never);
      const stored = task.artifacts.find((a) => a.artifactId.startsWith("tool-"));
      expect(wire(stored?.parts)).toEqual(expected);
      expect(JSON.stringify(wire(stored?.parts))).not.toContain("[object Object]");
    },
  );

  it("pushes a tool's media result as a file artifact", async () => {
    const sent = await rpc("media", "SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "picture" }] },
      configuration: { returnImmediately: true, taskPushNotificationConfig: { url: hooks.url } },
    });
    const taskId = sent.result.task.id as string;
    await until(
      () => ofTask(hooks.received, taskId).some((r) => stateOf(r) === "TASK_STATE_COMPLETED"),
      "the completed status to be pushed",
    );
    const pushed = ofTask(hooks.received, taskId)
      .map((r) => (r.body.artifactUpdate as Wire)?.artifact)
      .find((artifact) => artifact?.artifactId.startsWith("tool-"));
    expect(pushed.parts.slice(1)).toEqual([
      { text: "a bar chart" },
      { raw: PNG_BASE64, mediaType: "image/png", filename: "chart.png" },
      { url: "https://files.example.com/r.pdf" },
    ]);
  });

  it("sends file parts to a 0.3 client in 0.3's shape, and reads its file parts", async () => {
    const answer = await fetch(`${base}/a2a/media`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: {
          message: {
            kind: "message",
            messageId: randomUUID(),
            role: "user",
            parts: [
              { kind: "file", file: { bytes: PNG_BASE64, mimeType: "image/png", name: "a.png" } },
            ],
          },
        },
      }),
    });
    const task = ((await answer.json()) as Wire).result;
    expect(task.kind).toBe("task");
    expect(task.history[0].parts).toEqual([
      { kind: "file", file: { bytes: PNG_BASE64, mimeType: "image/png", name: "a.png" } },
    ]);
    expect(inputs()[0]!.messages.at(-1)!.content).toEqual([
      {
        type: "image",
        source: { type: "data", value: PNG_BASE64, mimeType: "image/png" },
        metadata: { filename: "a.png" },
      },
    ]);
  });

  it("passes an image on to an OpenAI-compatible model as an image_url part", async () => {
    openai.reply({ stream: textStream("a red pixel") });
    const client = await a2aClient(base, "vision", "JSONRPC");
    const task = asTask(
      await client.sendMessage({
        message: fileMessage([
          { text: "what is this?" },
          { raw: PNG_BASE64, mediaType: "image/png" },
        ]),
      } as never),
    );
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const body = openai.requests.at(-1)!.body as Wire;
    expect(body.messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
      ],
    });
  });

  it.each(BINDINGS)(
    "refuses a part of a media type the agent does not take (%s)",
    async (binding) => {
      const client = await a2aClient(base, "echo", binding);
      await expect(
        client.sendMessage({
          message: fileMessage([{ raw: PNG_BASE64, mediaType: "image/png" }]),
        } as never),
      ).rejects.toMatchObject({ name: "ContentTypeNotSupportedError" });
      const refused = await rpc("small", "SendMessage", {
        message: {
          messageId: "m",
          role: "ROLE_USER",
          parts: [{ url: "https://x.example/a.gif", mediaType: "image/gif" }],
        },
      });
      expect(refused.error).toMatchObject({
        code: -32005,
        message:
          "message.parts[0] is image/gif: this agent takes text/plain, image/png (its card's defaultInputModes)",
      });
    },
  );

  it("refuses a part or a message over the agent's size bounds, naming the part and the setting", async () => {
    const big = Buffer.alloc(120).toString("base64");
    const part = await rpc("small", "SendMessage", {
      message: { messageId: "m", role: "ROLE_USER", parts: [{ raw: big, mediaType: "image/png" }] },
    });
    expect(part.error).toMatchObject({
      code: -32602,
      message:
        "message.parts[0] holds 120 bytes: this agent takes at most 100 bytes per part (a2a.maxPartBytes)",
    });
    const small = Buffer.alloc(90).toString("base64");
    const message = await rpc("small", "SendMessage", {
      message: {
        messageId: "m",
        role: "ROLE_USER",
        parts: [
          { raw: small, mediaType: "image/png" },
          { raw: small, mediaType: "image/png" },
        ],
      },
    });
    expect(message.error).toMatchObject({
      code: -32602,
      message:
        "message holds 180 bytes: this agent takes at most 150 bytes per message (a2a.maxMessageBytes)",
    });
    const notBase64 = await rpc("media", "SendMessage", {
      message: {
        messageId: "m",
        role: "ROLE_USER",
        parts: [{ raw: "%%%", mediaType: "image/png" }],
      },
    });
    expect(notBase64.error).toMatchObject({
      code: -32602,
      message: "message.parts[0].raw must be the file's bytes in base64",
    });
    expect(inputs()).toHaveLength(0);
  });
});

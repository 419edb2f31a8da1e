import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Message, RunAgentInput } from "@ag-ui/core";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAiAdapter } from "../../src/adapters/openai.js";
import type { OpenAiAdapterConfig } from "../../src/adapters/openai-options.js";
import type { AdapterRunContext } from "../../src/adapters/types.js";
import { SegmentPipeline } from "../../src/pipeline/index.js";
import { chunk, OpenAiTestServer, textStream, usageChunk } from "../helpers/openai-server.js";

type Ev = Record<string, unknown> & { type: string };

const logger = pino({ level: "silent" });

function inputOf(messages: Message[], extra: Partial<RunAgentInput> = {}): RunAgentInput {
  return {
    threadId: "thread-1",
    runId: "run-1",
    messages,
    state: {},
    tools: [],
    context: [],
    ...extra,
  };
}

const hello: Message[] = [{ id: "u1", role: "user", content: "Hello" }];

function context(signal = new AbortController().signal): AdapterRunContext {
  return { signal, config: {}, segment: 0, logger };
}

async function collect(
  adapter: OpenAiAdapter,
  input: RunAgentInput,
  signal?: AbortSignal,
): Promise<Ev[]> {
  const events: Ev[] = [];
  for await (const event of adapter.run(input, context(signal))) events.push(event as Ev);
  return events;
}

/** Runs the events through the server's pipeline: no fault, and a terminal event at the end. */
function checkProtocol(events: Ev[], input: RunAgentInput): SegmentPipeline {
  const segment = new SegmentPipeline({
    threadId: input.threadId,
    runId: input.runId,
    initialMessages: input.messages,
  });
  for (const event of events) {
    expect(segment.push(event).fault?.message, JSON.stringify(event)).toBeUndefined();
  }
  expect(segment.end().fault?.message).toBeUndefined();
  return segment;
}

const types = (events: Ev[]) => events.map((event) => event.type);

describe("openai adapter", () => {
  let server: OpenAiTestServer;
  let config: OpenAiAdapterConfig;

  beforeAll(async () => {
    server = await OpenAiTestServer.start();
    config = { type: "openai", baseUrl: server.baseUrl, model: "test-model" };
  });
  afterAll(() => server.close());

  it("streams plain text as one assistant text message", async () => {
    server.reply({ stream: textStream("Hello there, friend") });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);

    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED",
    ]);
    expect(events[0]).toEqual({ type: "RUN_STARTED", threadId: "thread-1", runId: "run-1" });
    expect(events[1]).toMatchObject({ role: "assistant" });
    const ids = new Set(events.slice(1, 6).map((event) => event.messageId));
    expect(ids.size).toBe(1);
    expect(events[6]).toEqual({ type: "RUN_FINISHED", threadId: "thread-1", runId: "run-1" });

    const segment = checkProtocol(events, input);
    expect(segment.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "Hello there, friend",
    });
  });

  it("streams a tool call whose arguments are split over chunks, and leaves it pending", async () => {
    server.reply({
      stream: [
        chunk({ role: "assistant", content: null }),
        chunk({
          tool_calls: [
            {
              index: 0,
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: "" },
            },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Par' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'is"}' } }] }),
        chunk({}, "tool_calls"),
        { done: true },
      ],
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);

    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "RUN_FINISHED",
    ]);
    expect(events[1]).toMatchObject({ toolCallId: "call_1", toolCallName: "get_weather" });
    expect(typeof events[1]!.parentMessageId).toBe("string");
    expect(events[6]).toMatchObject({
      outcome: { type: "success", pendingToolCallIds: ["call_1"] },
    });

    const segment = checkProtocol(events, input);
    expect(segment.terminal).toMatchObject({ outcome: "success", pendingToolCallIds: ["call_1"] });
    expect(segment.messages.at(-1)).toMatchObject({
      role: "assistant",
      id: events[1]!.parentMessageId,
      toolCalls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Paris"}' },
        },
      ],
    });
  });

  it("streams text followed by two parallel tool calls on the same assistant message", async () => {
    server.reply({
      stream: [
        chunk({ role: "assistant", content: "Checking both." }),
        chunk({
          tool_calls: [
            {
              index: 0,
              id: "call_a",
              type: "function",
              function: { name: "lookup", arguments: '{"q":' },
            },
          ],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"a"}' } }] }),
        chunk({
          tool_calls: [
            {
              index: 1,
              id: "call_b",
              type: "function",
              function: { name: "lookup", arguments: "" },
            },
          ],
        }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '{"q":"b"}' } }] }),
        chunk({}, "tool_calls"),
        { done: true },
      ],
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);

    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "TOOL_CALL_END",
      "RUN_FINISHED",
    ]);
    const messageId = events[1]!.messageId;
    expect(events[4]).toMatchObject({ toolCallId: "call_a", parentMessageId: messageId });
    expect(events[7]).toMatchObject({ toolCallId: "call_b", parentMessageId: messageId });
    expect(events.at(-1)).toMatchObject({
      outcome: { type: "success", pendingToolCallIds: ["call_a", "call_b"] },
    });

    const segment = checkProtocol(events, input);
    const last = segment.messages.at(-1) as { content: string; toolCalls: unknown[] };
    expect(last).toMatchObject({ id: messageId, role: "assistant", content: "Checking both." });
    expect(last.toolCalls).toEqual([
      { id: "call_a", type: "function", function: { name: "lookup", arguments: '{"q":"a"}' } },
      { id: "call_b", type: "function", function: { name: "lookup", arguments: '{"q":"b"}' } },
    ]);
  });

  it("streams reasoning_content (DeepSeek, vLLM) as a reasoning span before the text", async () => {
    server.reply({
      stream: [
        chunk({ role: "assistant", reasoning_content: "Let me " }),
        chunk({ reasoning_content: "think." }),
        chunk({ content: "Answer." }),
        chunk({}, "stop"),
        { done: true },
      ],
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);

    expect(types(events)).toEqual([
      "RUN_STARTED",
      "REASONING_START",
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_END",
      "REASONING_END",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED",
    ]);
    expect(events[2]).toMatchObject({ role: "reasoning" });
    expect(events[5]!.messageId).toBe(events[2]!.messageId);
    expect(events[6]!.messageId).toBe(events[1]!.messageId);

    const segment = checkProtocol(events, input);
    expect(segment.messages.slice(-2)).toMatchObject([
      { role: "reasoning", content: "Let me think." },
      { role: "assistant", content: "Answer." },
    ]);
  });

  it("streams `reasoning` (OpenRouter, Ollama) the same way", async () => {
    server.reply({
      stream: [chunk({ reasoning: "Hmm." }), chunk({ content: "Yes." }, "stop"), { done: true }],
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(types(events)).toContain("REASONING_MESSAGE_CONTENT");
    const segment = checkProtocol(events, input);
    expect(segment.messages.slice(-2)).toMatchObject([
      { role: "reasoning", content: "Hmm." },
      { role: "assistant", content: "Yes." },
    ]);
  });

  it("reports the usage chunk as RUN_FINISHED.usage in AG-UI TokenUsage form", async () => {
    server.reply({
      stream: [
        chunk({ content: "Hi" }),
        chunk({}, "stop"),
        usageChunk({
          prompt_tokens: 12,
          completion_tokens: 30,
          total_tokens: 42,
          prompt_tokens_details: { cached_tokens: 4 },
          completion_tokens_details: { reasoning_tokens: 20 },
        }),
        { done: true },
      ],
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(events.at(-1)).toEqual({
      type: "RUN_FINISHED",
      threadId: "thread-1",
      runId: "run-1",
      usage: [
        {
          model: "test-model",
          inputTokens: 12,
          outputTokens: 30,
          totalTokens: 42,
          cachedInputTokens: 4,
          reasoningTokens: 20,
        },
      ],
    });
    const segment = checkProtocol(events, input);
    expect(segment.terminal?.usage).toHaveLength(1);
  });

  it("turns a 401 error body into RUN_ERROR with the provider's message and code", async () => {
    server.reply({
      status: 401,
      json: {
        error: {
          message: "Incorrect API key provided: sk-bad.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      },
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(types(events)).toEqual(["RUN_STARTED", "RUN_ERROR"]);
    expect(events[1]!.message).toContain("Incorrect API key provided: sk-bad.");
    expect(events[1]!.message).toContain("401");
    expect(events[1]!.code).toBe("invalid_api_key");
    const segment = checkProtocol(events, input);
    expect(segment.terminal).toMatchObject({ kind: "error", code: "invalid_api_key" });
  });

  it("quotes a non-JSON error body with the HTTP status", async () => {
    server.reply({ status: 502, text: "Bad Gateway" });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(events[1]).toMatchObject({ type: "RUN_ERROR" });
    expect(events[1]!.message).toContain("HTTP 502: Bad Gateway");
    checkProtocol(events, input);
  });

  it("closes the open text message before the RUN_ERROR of an in-stream error", async () => {
    server.reply({
      stream: [
        chunk({ content: "Partial" }),
        { chunk: { error: { message: "The model overloaded", type: "server_error", code: 503 } } },
        { done: true },
      ],
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_ERROR",
    ]);
    expect(events[4]).toEqual({ type: "RUN_ERROR", message: "The model overloaded", code: "503" });
    const segment = checkProtocol(events, input);
    expect(segment.messages.at(-1)).toMatchObject({ role: "assistant", content: "Partial" });
  });

  it("reports a dropped connection mid-stream as RUN_ERROR naming the base URL", async () => {
    server.reply({
      stream: [
        chunk({ content: "Half an ans" }),
        chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: "{" } }] }),
        { drop: true },
      ],
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    const last = events.at(-1)!;
    expect(last.type).toBe("RUN_ERROR");
    expect(last.message).toContain(server.baseUrl);
    expect(last.message).toContain("dropped");
    expect(types(events)).toContain("TOOL_CALL_END");
    checkProtocol(events, input);
  });

  it("reports a stream that ends without finishing as a dropped connection", async () => {
    server.reply({ stream: [chunk({ content: "Cut" })] });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(events.at(-1)).toMatchObject({ type: "RUN_ERROR" });
    expect(events.at(-1)!.message).toContain("dropped");
    checkProtocol(events, input);
  });

  it("finishes a stream that has a finish_reason but no [DONE]", async () => {
    server.reply({ stream: [chunk({ content: "Done" }, "stop")] });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    checkProtocol(events, input);
  });

  it("reads a last event that the server did not end with a blank line", async () => {
    server.reply({ stream: [chunk({ content: "Tail" }, "stop"), { raw: "data: [DONE]" }] });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    checkProtocol(events, input);
  });

  it("treats an SSE `event: error` as a provider error", async () => {
    server.reply({
      stream: [
        chunk({ content: "Part" }),
        { raw: 'event: error\ndata: {"message":"rate limited","code":"429"}\n\n' },
      ],
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(events.at(-1)).toEqual({ type: "RUN_ERROR", message: "rate limited", code: "429" });
    checkProtocol(events, input);
  });

  it("reports a refused connection as RUN_ERROR naming the URL", async () => {
    const closed = http.createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));

    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter({ ...config, baseUrl }), input);
    expect(types(events)).toEqual(["RUN_STARTED", "RUN_ERROR"]);
    expect(events[1]!.message).toContain(`${baseUrl}/chat/completions`);
    expect(events[1]!.message).toContain("ECONNREFUSED");
    checkProtocol(events, input);
  });

  it("aborts the request on cancel and returns quietly", async () => {
    server.reply({ stream: [chunk({ content: "Streaming" }), { hang: true }] });
    const controller = new AbortController();
    const events: Ev[] = [];
    for await (const event of new OpenAiAdapter(config).run(
      inputOf(hello),
      context(controller.signal),
    )) {
      events.push(event as Ev);
      if (event && (event as Ev).type === "TEXT_MESSAGE_CONTENT") controller.abort();
    }
    expect(types(events)).toEqual(["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]);
    await server.last.closed;
    expect(server.last.clientAborted).toBe(true);
  });

  it("closes the request when the consumer stops early", async () => {
    server.reply({ stream: [chunk({ content: "Streaming" }), { hang: true }] });
    for await (const event of new OpenAiAdapter(config).run(inputOf(hello), context())) {
      if ((event as Ev).type === "TEXT_MESSAGE_CONTENT") break;
    }
    await server.last.closed;
    expect(server.last.clientAborted).toBe(true);
  });

  it("maps the run input onto the chat-completions request", async () => {
    process.env.OPENAI_ADAPTER_TEST_KEY = "sk-test-123";
    const adapter = new OpenAiAdapter({
      ...config,
      apiKeyEnv: "OPENAI_ADAPTER_TEST_KEY",
      systemPrompt: "You are terse.",
      temperature: 0.2,
      topP: 0.9,
      maxTokens: 256,
    });
    server.reply({ stream: textStream("ok") });
    const messages: Message[] = [
      { id: "s1", role: "system", content: "Stored system note." },
      { id: "d1", role: "developer", content: "Developer note." },
      { id: "u1", role: "user", content: "Weather in Paris?" },
      {
        id: "a1",
        role: "assistant",
        toolCalls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { id: "t1", role: "tool", toolCallId: "call_1", content: '{"temp":21}' },
      { id: "r1", role: "reasoning", content: "internal" },
      {
        id: "u2",
        role: "user",
        content: [
          { type: "text", text: "And this picture?" },
          { type: "image", source: { type: "url", value: "https://example.com/cat.png" } },
          { type: "image", source: { type: "data", value: "AAAA", mimeType: "image/jpeg" } },
        ],
      },
    ];
    const input = inputOf(messages, {
      tools: [
        {
          name: "get_weather",
          description: "Current weather",
          parameters: { type: "object", properties: { city: { type: "string" } } },
        },
        { name: "ping", description: "No arguments" },
      ],
      context: [{ description: "User timezone", value: "Europe/Paris" }],
    });
    const events = await collect(adapter, input);
    checkProtocol(events, input);

    const request = server.last;
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/v1/chat/completions");
    expect(request.headers.authorization).toBe("Bearer sk-test-123");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.body).toEqual({
      model: "test-model",
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 256,
      messages: [
        { role: "system", content: "You are terse." },
        { role: "system", content: "Context:\n- User timezone: Europe/Paris" },
        { role: "system", content: "Stored system note." },
        { role: "system", content: "Developer note." },
        { role: "user", content: "Weather in Paris?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"temp":21}' },
        {
          role: "user",
          content: [
            { type: "text", text: "And this picture?" },
            { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
            { type: "image_url", image_url: { url: "data:image/jpeg;base64,AAAA" } },
          ],
        },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Current weather",
            parameters: { type: "object", properties: { city: { type: "string" } } },
          },
        },
        {
          type: "function",
          function: {
            name: "ping",
            description: "No arguments",
            parameters: { type: "object", properties: {} },
          },
        },
      ],
    });
    delete process.env.OPENAI_ADAPTER_TEST_KEY;
  });

  it("sends no Authorization header and no tools when none are configured or given", async () => {
    server.reply({ stream: textStream("ok") });
    await collect(new OpenAiAdapter(config), inputOf(hello, { tools: [] }));
    expect(server.last.headers.authorization).toBeUndefined();
    expect(server.last.body).not.toHaveProperty("tools");
    expect(server.last.body).not.toHaveProperty("temperature");
    expect(server.last.body.messages).toEqual([{ role: "user", content: "Hello" }]);
  });

  it("throws at construction when apiKeyEnv names a missing variable", () => {
    delete process.env.OPENAI_ADAPTER_MISSING_KEY;
    expect(() => new OpenAiAdapter({ ...config, apiKeyEnv: "OPENAI_ADAPTER_MISSING_KEY" })).toThrow(
      /OPENAI_ADAPTER_MISSING_KEY/,
    );
  });

  it("accepts a server that ignores stream:true and answers with the whole completion", async () => {
    server.reply({
      status: 200,
      json: {
        id: "chatcmpl-1",
        object: "chat.completion",
        model: "test-model",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: "Whole answer",
              tool_calls: [
                { id: "call_w", type: "function", function: { name: "f", arguments: "{}" } },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
      },
    });
    const input = inputOf(hello);
    const events = await collect(new OpenAiAdapter(config), input);
    expect(types(events)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "RUN_FINISHED",
    ]);
    expect(events.at(-1)).toMatchObject({
      outcome: { pendingToolCallIds: ["call_w"] },
      usage: [{ inputTokens: 3, outputTokens: 5, totalTokens: 8 }],
    });
    checkProtocol(events, input);
  });

  it("sends tool results back on the next run", async () => {
    server.reply({ stream: textStream("It is 21 degrees.") });
    const input = inputOf([
      { id: "u1", role: "user", content: "Weather?" },
      {
        id: "a1",
        role: "assistant",
        content: "Let me check.",
        toolCalls: [{ id: "call_9", type: "function", function: { name: "w", arguments: "{}" } }],
      },
      { id: "t1", role: "tool", toolCallId: "call_9", content: "21C", error: "stale data" },
    ]);
    const events = await collect(new OpenAiAdapter(config), input);
    checkProtocol(events, input);
    expect(server.last.body.messages).toEqual([
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [{ id: "call_9", type: "function", function: { name: "w", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_9", content: "21C\n\nError: stale data" },
    ]);
  });
});

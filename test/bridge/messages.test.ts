import { describe, expect, it } from "vitest";
import {
  acpToAguiMessage,
  acpToAguiMessages,
  aguiToAcpMessages,
} from "../../src/bridge/acp/messages.js";
import type { AgUiMessage } from "../../src/pipeline/index.js";
import { isDomainError } from "../../src/util/errors.js";

const agui = (messages: unknown[]) => messages as AgUiMessage[];

describe("AG-UI ⇄ ACP messages", () => {
  const history = agui([
    { id: "s", role: "system", content: "be brief" },
    {
      id: "u",
      role: "user",
      content: [
        { type: "text", text: "what is this?" },
        {
          type: "image",
          source: { type: "url", value: "https://x/cat.png", mimeType: "image/png" },
        },
      ],
      metadata: { via: "web" },
    },
    { id: "r", role: "reasoning", content: "hmm", encryptedValue: "E" },
    {
      id: "a",
      role: "assistant",
      toolCalls: [{ id: "c", type: "function", function: { name: "look", arguments: "{}" } }],
      subagentRunId: "s1",
    },
    { id: "t", role: "tool", toolCallId: "c", content: "a cat", error: "partial" },
    { id: "act", role: "activity", activityType: "search", content: { found: 2 } },
    { id: "d", role: "developer", content: "dev", name: "ops" },
  ]);

  it("gives every message a role and string-or-block content, keeping every other key", () => {
    const acp = aguiToAcpMessages(history);
    expect(acp[1]).toEqual(history[1]);
    expect(acp[3]).toEqual({ ...history[3], content: "" });
    expect(acp[4]).toEqual(history[4]);
    expect(acp[5]).toEqual({
      id: "act",
      role: "activity",
      activityType: "search",
      content: [{ type: "activity", content: { found: 2 } }],
    });
    for (const m of acp) {
      expect(typeof m.role).toBe("string");
      expect(typeof m.content === "string" || Array.isArray(m.content)).toBe(true);
    }
  });

  it("round-trips AG-UI → ACP → AG-UI without loss", () => {
    expect(acpToAguiMessages(aguiToAcpMessages(history))).toEqual(history);
  });

  it("carries non-object part metadata through ACP's object-only block metadata", () => {
    const m = agui([
      { id: "u", role: "user", content: [{ type: "text", text: "x", metadata: "tag" }] },
    ]);
    const acp = aguiToAcpMessages(m);
    expect(acp[0]!.content).toEqual([{ type: "text", text: "x", metadata: { $value: "tag" } }]);
    expect(acpToAguiMessages(acp)).toEqual(m);
  });

  it("mints an id when the ACP message has none, and maps LangChain role names", () => {
    const m = acpToAguiMessage({ role: "human", content: "hi" }) as unknown as Record<
      string,
      unknown
    >;
    expect(m.role).toBe("user");
    expect(m.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(acpToAguiMessage({ role: "ai", content: "yo" })).toMatchObject({ role: "assistant" });
  });

  it("joins text blocks for string-only roles", () => {
    expect(
      acpToAguiMessage({
        id: "a",
        role: "assistant",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      }),
    ).toEqual({ id: "a", role: "assistant", content: "ab" });
  });

  it("accepts OpenAI and LangChain tool call shapes, and tool_call_id", () => {
    const out = acpToAguiMessages([
      {
        id: "a1",
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"x":1}' } }],
      },
      { id: "a2", role: "ai", content: "", tool_calls: [{ id: "c2", name: "g", args: { y: 2 } }] },
      { id: "t", role: "tool", content: "r", tool_call_id: "c1", additional_kwargs: {} },
    ]);
    expect(out).toEqual([
      {
        id: "a1",
        role: "assistant",
        toolCalls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"x":1}' } }],
      },
      {
        id: "a2",
        role: "assistant",
        toolCalls: [{ id: "c2", type: "function", function: { name: "g", arguments: '{"y":2}' } }],
      },
      { id: "t", role: "tool", content: "r", toolCallId: "c1" },
    ]);
  });

  it("upgrades legacy binary parts and OpenAI image_url blocks to AG-UI image parts", () => {
    const out = acpToAguiMessage({
      id: "u",
      role: "user",
      content: [
        { type: "binary", mimeType: "image/png", url: "https://x/a.png" },
        { type: "image_url", image_url: { url: "https://x/b.png" } },
      ],
    });
    expect(out).toEqual({
      id: "u",
      role: "user",
      content: [
        { type: "image", source: { type: "url", value: "https://x/a.png", mimeType: "image/png" } },
        { type: "image", source: { type: "url", value: "https://x/b.png" } },
      ],
    });
  });

  it.each([
    [{ role: "narrator", content: "x" }, "/role 'narrator' is not an AG-UI message role"],
    [{ role: "user", content: [{ type: "hologram" }] }, "content block type 'hologram'"],
    [{ role: "assistant", content: [{ type: "image", source: {} }] }, "only text blocks"],
    [{ role: "tool", content: "r" }, "toolCallId is required"],
    [{ role: "activity", content: "x", activityType: "a" }, "single activity block"],
    ["nope", "must be an object"],
  ])("rejects %j as invalid input (422)", (message, why) => {
    let error: unknown;
    try {
      acpToAguiMessages([message]);
    } catch (e) {
      error = e;
    }
    expect(isDomainError(error, "invalid")).toBe(true);
    expect((error as Error).message).toContain("input/messages/0");
    expect((error as Error).message).toContain(why);
  });
});

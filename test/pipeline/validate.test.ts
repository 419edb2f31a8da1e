import { describe, expect, it } from "vitest";
import { SegmentPipeline } from "../../src/pipeline/index.js";
import { formatErrors } from "../../src/pipeline/validate.js";
import {
  deepFreeze,
  finished,
  messages,
  RUN,
  replay,
  run,
  started,
  THREAD,
  text,
} from "./helpers.js";

describe("pipeline validation", () => {
  it("passes a valid event through as the very same object", () => {
    const seg = new SegmentPipeline({ threadId: THREAD, runId: RUN });
    const event = started();
    expect(seg.push(event).events[0]).toBe(event);
  });

  it("drops a non-object event with a warning and keeps going", () => {
    const r = replay([started(), 42, null, "TEXT", [1], finished()]);
    expect(r.fault).toBeUndefined();
    expect(r.warnings).toHaveLength(4);
    expect(r.warnings[0]).toMatch(/^event 1 \(number\): dropped: an event must be a JSON object/);
    expect(r.events.map((e) => e.type)).toEqual(["RUN_STARTED", "RUN_FINISHED"]);
  });

  it("drops an event of unknown or missing type with a warning naming the type", () => {
    const r = replay(run({ type: "FUTURE_EVENT", x: 1 }, { noType: true }));
    expect(r.fault).toBeUndefined();
    expect(r.warnings[0]).toContain("unrecognised type 'FUTURE_EVENT'");
    expect(r.warnings[1]).toContain("unrecognised type 'undefined'");
    expect(r.events).toHaveLength(2);
  });

  it("strips unknown top-level fields with a warning naming each one", () => {
    const r = replay(run(...text("m1", "hi", { vendorField: 1, "a/b": 2 })));
    expect(r.fault).toBeUndefined();
    expect(r.warnings).toEqual([
      "event 1 (TEXT_MESSAGE_START): removed unrecognised material at /vendorField",
      "event 1 (TEXT_MESSAGE_START): removed unrecognised material at /a~1b",
    ]);
    expect(r.events[1]).toEqual({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" });
  });

  it("strips unknown nested fields, e.g. inside a snapshot message and its tool call", () => {
    const r = replay(
      run({
        type: "MESSAGES_SNAPSHOT",
        messages: [
          {
            id: "a1",
            role: "assistant",
            extra: true,
            toolCalls: [
              { id: "c1", type: "function", function: { name: "f", arguments: "{}", x: 1 } },
            ],
          },
        ],
      }),
    );
    expect(r.fault).toBeUndefined();
    expect(r.warnings.map((w) => w.split(" at ")[1])).toEqual([
      "/messages/0/extra",
      "/messages/0/toolCalls/0/function/x",
    ]);
    expect(messages(r)).toEqual([
      {
        id: "a1",
        role: "assistant",
        toolCalls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
    ]);
  });

  it("drops an unrecognised union member from a list and from an optional position", () => {
    const r = replay([
      started(),
      { type: "STATE_SNAPSHOT", snapshot: { n: 1 } },
      {
        type: "STATE_DELTA",
        delta: [
          { op: "increment", path: "/n" },
          { op: "replace", path: "/n", value: 2 },
        ],
      },
      finished({ outcome: { type: "paused" } }),
    ]);
    expect(r.fault).toBeUndefined();
    expect(r.warnings.map((w) => w.split(" at ")[1])).toEqual(["/delta/0", "/outcome"]);
    expect(r.seg.state).toEqual({ n: 2 });
    expect(r.events.at(-1)).not.toHaveProperty("outcome");
  });

  it("drops a media part whose required source is of an unknown kind, keeping the list", () => {
    const r = replay(
      run({
        type: "MESSAGES_SNAPSHOT",
        messages: [
          {
            id: "u1",
            role: "user",
            content: [
              { type: "text", text: "see" },
              { type: "image", source: { type: "hologram", value: "x" } },
            ],
          },
        ],
      }),
    );
    expect(r.fault).toBeUndefined();
    expect(r.warnings[0]).toContain("/messages/0/content/1");
    expect(messages(r)[0]!.content).toEqual([{ type: "text", text: "see" }]);
  });

  it("keeps unknown members of open objects: metadata, state, activity content, patch operations", () => {
    const r = replay(
      run(
        {
          type: "STATE_SNAPSHOT",
          snapshot: { anything: { goes: [1] } },
          metadata: { k: { v: 1 } },
        },
        { type: "STATE_DELTA", delta: [{ op: "remove", path: "/anything", value: "ignored" }] },
        { type: "ACTIVITY_SNAPSHOT", messageId: "a", activityType: "t", content: { free: 1 } },
      ),
    );
    expect(r.fault).toBeUndefined();
    expect(r.warnings).toEqual([]);
  });

  it("is fatal for a malformed known field, naming the index, type and problem", () => {
    const r = replay([
      started(),
      { type: "TEXT_MESSAGE_START", messageId: "m" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: 3 },
    ]);
    expect(r.fault?.message).toBe("event 2 (TEXT_MESSAGE_CONTENT): /delta must be string");
    expect(r.fault?.rule).toBe("validation");
    expect(r.fault?.index).toBe(2);
    expect(r.fault?.eventType).toBe("TEXT_MESSAGE_CONTENT");
  });

  it("is fatal for a missing required field, after stripping unknown ones", () => {
    const r = replay([started(), { type: "SUBAGENT_STARTED", subagentRunId: "s", nme: "x" }]);
    expect(r.warnings[0]).toContain("/nme");
    expect(r.fault?.message).toBe("event 1 (SUBAGENT_STARTED): must have required property 'name'");
  });

  it("is fatal for a value outside a closed set, and says what was allowed", () => {
    const r = replay([started(), { type: "TEXT_MESSAGE_START", messageId: "m", role: "narrator" }]);
    expect(r.fault?.message).toBe(
      'event 1 (TEXT_MESSAGE_START): /role must be one of "developer", "system", "assistant", "user"',
    );
  });

  it("does not treat an array in a union slot as an unrecognised member", () => {
    const r = replay([started(), finished({ outcome: [{ type: "success" }] })]);
    expect(r.fault?.message).toBe("event 1 (RUN_FINISHED): /outcome must be object");
  });

  it("upgrades legacy nulls to absent fields with a warning", () => {
    const r = replay([
      started(),
      { type: "TOOL_CALL_START", toolCallId: "c", toolCallName: "f", parentMessageId: null },
      { type: "TOOL_CALL_END", toolCallId: "c", rawEvent: null },
      finished({ outcome: null, result: null }),
    ]);
    expect(r.fault).toBeUndefined();
    expect(r.warnings.join("\n")).toMatch(/parentMessageId: null/);
    expect(r.warnings.join("\n")).toMatch(/rawEvent: null/);
    expect(r.warnings.join("\n")).toMatch(/outcome: null/);
    expect(r.events[1]).not.toHaveProperty("parentMessageId");
  });

  it("translates retired THINKING_* events into reasoning with warnings", () => {
    const r = replay(
      run(
        { type: "THINKING_START", title: "t" },
        { type: "THINKING_TEXT_MESSAGE_START" },
        { type: "THINKING_TEXT_MESSAGE_CONTENT", delta: "hmm" },
        { type: "THINKING_TEXT_MESSAGE_END" },
        { type: "THINKING_END" },
      ),
    );
    expect(r.fault).toBeUndefined();
    expect(r.events.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "REASONING_START",
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_END",
      "REASONING_END",
      "RUN_FINISHED",
    ]);
    expect(r.warnings.some((w) => w.includes("THINKING_START.title"))).toBe(true);
    expect(messages(r)).toMatchObject([{ role: "reasoning", content: "hmm" }]);
  });

  it("upgrades legacy binary parts inside a messages snapshot", () => {
    const r = replay(
      run({
        type: "MESSAGES_SNAPSHOT",
        messages: [
          {
            id: "u",
            role: "user",
            content: [{ type: "binary", mimeType: "audio/wav", data: "AAAA", filename: "a.wav" }],
          },
        ],
      }),
    );
    expect(r.fault).toBeUndefined();
    expect(r.warnings[0]).toContain("binary");
    expect(messages(r)[0]!.content).toEqual([
      {
        type: "audio",
        source: { type: "data", value: "AAAA", mimeType: "audio/wav" },
        metadata: { filename: "a.wav" },
      },
    ]);
  });

  it("never mutates a frozen event, even when it strips from it", () => {
    const snapshot = deepFreeze({
      type: "MESSAGES_SNAPSHOT",
      messages: [{ id: "u", role: "user", content: "hi", junk: 1 }],
      junk: 2,
    });
    const r = replay(run(snapshot));
    expect(r.fault).toBeUndefined();
    expect(snapshot.junk).toBe(2);
    expect(snapshot.messages[0]!.junk).toBe(1);
    expect(messages(r)).toEqual([{ id: "u", role: "user", content: "hi" }]);
  });
});

describe("formatErrors", () => {
  it("drops union wrappers and the tag mismatches of branches that were not meant", () => {
    const text = formatErrors([
      {
        instancePath: "/m/role",
        keyword: "const",
        params: { allowedValue: "system" },
        schemaPath: "",
        message: "",
      },
      {
        instancePath: "/m",
        keyword: "required",
        params: { missingProperty: "content" },
        schemaPath: "",
        message: "must have required property 'content'",
      },
      {
        instancePath: "/m",
        keyword: "oneOf",
        params: {},
        schemaPath: "",
        message: "must match exactly one schema in oneOf",
      },
    ]);
    expect(text).toBe("/m must have required property 'content'");
  });
});

import type { Message, Part, Task } from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import {
  A2aEventMapper,
  contextFromHistory,
  endingOf,
  interruptIdFor,
  messageIdFor,
  taskOfInterrupt,
} from "../../src/adapters/a2a-map.js";
import { parseConfig } from "../../src/config/load.js";
import { AgentRegistry } from "../../src/config/registry.js";

const text = (value: string): Part => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});
const data = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});
const message = (id: string, ...parts: Part[]): Message => ({
  messageId: id,
  role: Role.ROLE_AGENT,
  parts,
  contextId: "ctx",
  taskId: "task",
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const artifact = (id: string, parts: Part[]) => ({
  artifactId: id,
  name: "",
  description: "",
  parts,
  metadata: undefined,
  extensions: [],
});
const update = (id: string, parts: Part[], append: boolean, lastChunk: boolean) => ({
  taskId: "task",
  contextId: "ctx",
  artifact: artifact(id, parts),
  append,
  lastChunk,
  metadata: undefined,
});
const types = (events: { type: string }[]) => events.map((e) => e.type);

describe("A2A → AG-UI mapping", () => {
  it("a status message with the id of an artifact shown is that artifact again: shown once", () => {
    const mapper = new A2aEventMapper({}, "ctx");
    const streamed = mapper.artifactUpdate(update("answer-1", [text("the answer")], false, true));
    expect(types(streamed)).toEqual([
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
    ]);
    expect(mapper.message(message("answer-1", text("the answer")))).toEqual([]);
    // A message of its own id is still shown.
    expect(types(mapper.message(message("m2", text("and more"))))).toContain(
      "TEXT_MESSAGE_CONTENT",
    );
  });

  it("a status message once, however often the task is seen (polls, re-reads)", () => {
    const mapper = new A2aEventMapper({}, "ctx");
    const status = message("m1", text("hi "), text("there"));
    expect(types(mapper.message(status))).toEqual([
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
    ]);
    expect(mapper.message(status)).toEqual([]);
    expect(mapper.message({ ...status, role: Role.ROLE_USER, messageId: "u" })).toEqual([]);
  });

  it("an artifact seen whole after streamed chunks › only the parts not shown yet", () => {
    const mapper = new A2aEventMapper({}, "ctx");
    mapper.artifactUpdate(update("a", [text("one ")], false, false));
    const task: Task = {
      id: "task",
      contextId: "ctx",
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
      artifacts: [artifact("a", [text("one "), text("two")])],
      history: [],
      metadata: undefined,
    };
    const events = mapper.task(task);
    expect(events.map((e) => e.delta ?? e.type)).toEqual(["two"]);
    expect(mapper.task(task)).toEqual([]);
    expect(types(mapper.closeAll())).toEqual(["TEXT_MESSAGE_END"]);
    expect(mapper.closeAll()).toEqual([]);
  });

  it("an artifact replaced (append false again) › a message of its own", () => {
    const mapper = new A2aEventMapper({}, "ctx");
    const first = mapper.artifactUpdate(update("a", [text("draft")], false, false));
    const second = mapper.artifactUpdate(update("a", [text("final")], false, true));
    expect(types(second)).toEqual([
      "TEXT_MESSAGE_END",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
    ]);
    expect(second[0]!.messageId).toBe(first[0]!.messageId);
    expect(second[1]!.messageId).not.toBe(first[0]!.messageId);
  });

  it("data parts › merged into the state: an object's keys, anything else as `data`", () => {
    const mapper = new A2aEventMapper({ mine: 1 }, "ctx");
    const events = mapper.message(message("m", data({ a: 1 }), data([1, 2])));
    expect(events).toEqual([
      { type: "STATE_SNAPSHOT", snapshot: { mine: 1, a: 1 } },
      { type: "STATE_SNAPSHOT", snapshot: { mine: 1, a: 1, data: [1, 2] } },
    ]);
  });

  it("file parts › a line naming the file", () => {
    const mapper = new A2aEventMapper({}, "ctx");
    const url: Part = {
      content: { $case: "url", value: "https://x/report.pdf" },
      metadata: undefined,
      filename: "report.pdf",
      mediaType: "application/pdf",
    };
    const deltas = mapper.message(message("f", url)).flatMap((e) => (e.delta ? [e.delta] : []));
    expect(deltas).toEqual(["[report.pdf](https://x/report.pdf)"]);
  });

  it("ids › the context travels in message ids; an interrupt id names its task and question", () => {
    const history = [
      { id: "u1" },
      { id: messageIdFor("old:ctx") },
      { id: messageIdFor("new ctx/é") },
      { id: "u2" },
    ];
    expect(contextFromHistory(history)).toBe("new ctx/é");
    expect(contextFromHistory([{ id: "plain" }])).toBeUndefined();
    const id = interruptIdFor("c:1", "t:2", "m:3");
    expect(taskOfInterrupt(id)).toEqual({
      contextId: "c:1",
      taskId: "t:2",
      statusMessageId: "m:3",
    });
    expect(taskOfInterrupt("someone-else's")).toBeUndefined();
  });

  it("task states › endings", () => {
    const asked = message("q", text("Which city?"));
    expect(endingOf(TaskState.TASK_STATE_WORKING, undefined)).toBeUndefined();
    expect(endingOf(TaskState.TASK_STATE_COMPLETED, undefined)).toEqual({ kind: "finished" });
    expect(endingOf(TaskState.TASK_STATE_AUTH_REQUIRED, asked)).toEqual({
      kind: "interrupted",
      reason: "auth_required",
      message: "Which city?",
      statusMessageId: "q",
    });
    expect(endingOf(TaskState.TASK_STATE_REJECTED, message("r", text("no")))).toEqual({
      kind: "failed",
      state: "rejected",
      message: "no",
    });
  });
});

describe("the registry: an agent's own description refines its descriptor", () => {
  it("fills an empty description, keeps a given one, adds to the schemas, validates as before", async () => {
    const config = await parseConfig(
      `
agents:
  - { name: a, version: "1", description: "", adapter: { type: echo } }
  - { name: b, version: "1", description: Mine., adapter: { type: echo } }
`,
      { filename: "t.yaml", baseDir: process.cwd() },
    );
    const registry = new AgentRegistry(config);
    const [a, b] = registry.list();
    const before = a!.descriptor;
    let own = {
      description: "From the card.",
      url: "https://x/card.json",
      input: { "x-a2a-card": { name: "x" } },
    };
    registry.describeWith(a!.agentId, () => own);
    registry.describeWith(b!.agentId, () => own);
    expect(a!.descriptor.metadata).toEqual({
      ref: { name: "a", version: "1", url: "https://x/card.json" },
      description: "From the card.",
    });
    expect(a!.agent.metadata.description).toBe("From the card.");
    expect(a!.descriptor.specs.input["x-a2a-card"]).toEqual({ name: "x" });
    expect(a!.descriptor.specs.input.properties).toEqual(before.specs.input.properties);
    expect(b!.descriptor.metadata.description).toBe("Mine.");
    // The same object until the source changes it.
    expect(a!.descriptor).toBe(a!.descriptor);
    own = { ...own, description: "Changed." };
    expect(a!.descriptor.metadata.description).toBe("Changed.");
    expect(Object.isFrozen(a!.descriptor)).toBe(true);
    expect(a!.validateInput({ messages: "nope" })).toMatch(/^input\/messages/);
  });
});

import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Message, RunAgentInput } from "@ag-ui/core";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { loadModuleAdapter } from "../../src/adapters/module.js";
import { fromObservable } from "../../src/adapters/module-observable.js";
import type { ModuleAdapterConfig } from "../../src/adapters/module-options.js";
import type { AdapterRunContext, AgentAdapter } from "../../src/adapters/types.js";
import { SegmentPipeline } from "../../src/pipeline/index.js";

type Ev = Record<string, unknown> & { type: string };

const fixtures = path.resolve(import.meta.dirname, "../fixtures/modules");
const logger = pino({ level: "silent" });

function moduleConfig(file: string, exportName = "default"): ModuleAdapterConfig {
  const relative = `test/fixtures/modules/${file}`;
  return {
    type: "module",
    path: relative,
    specifier: pathToFileURL(path.join(fixtures, file)).href,
    export: exportName,
  };
}

const messages: Message[] = [{ id: "u1", role: "user", content: "hi there" }];
let runs = 0;
function input(): RunAgentInput {
  runs += 1;
  return {
    threadId: "thread-m",
    runId: `run-${runs}`,
    messages,
    state: {},
    tools: [],
    context: [],
  };
}

function context(signal = new AbortController().signal): AdapterRunContext {
  return { signal, config: {}, segment: 0, logger };
}

async function collect(adapter: AgentAdapter, runInput: RunAgentInput): Promise<Ev[]> {
  const events: Ev[] = [];
  for await (const event of adapter.run(runInput, context())) events.push(event as Ev);
  return events;
}

/** Runs the events through the server's pipeline: no fault, and a terminal event at the end. */
function checkProtocol(events: Ev[], runInput: RunAgentInput): SegmentPipeline {
  const segment = new SegmentPipeline({
    threadId: runInput.threadId,
    runId: runInput.runId,
    initialMessages: runInput.messages,
  });
  for (const event of events) {
    expect(segment.push(event).fault?.message, JSON.stringify(event)).toBeUndefined();
  }
  expect(segment.end().fault?.message).toBeUndefined();
  return segment;
}

async function runValid(
  adapter: AgentAdapter,
): Promise<{ events: Ev[]; segment: SegmentPipeline }> {
  const runInput = input();
  const events = await collect(adapter, runInput);
  return { events, segment: checkProtocol(events, runInput) };
}

const lastText = (segment: SegmentPipeline) =>
  (segment.messages.at(-1) as { content?: unknown } | undefined)?.content;

describe("module adapter › our adapter shape", () => {
  it("loads an async generator function and yields protocol-valid events", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("generator-agent.mjs"));
    const { segment } = await runValid(adapter);
    expect(lastText(segment)).toBe("generator heard: hi there (segment 0)");
  });

  it("loads an object with run, passing capabilities and close through", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("generator-agent.mjs", "objectAgent"));
    const { segment } = await runValid(adapter);
    expect(lastText(segment)).toBe("object agent");
    expect(adapter.capabilities?.()).toEqual({ transport: { streaming: true } });
    await adapter.close?.();
    const mod = await import(moduleConfig("generator-agent.mjs").specifier);
    expect(mod.objectAgent.closed).toBe(true);
  });

  it("accepts a run that returns a synchronous iterable", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("generator-agent.mjs", "arrayAgent"));
    const { segment } = await runValid(adapter);
    expect(segment.terminal).toMatchObject({ outcome: "success", result: "from an array" });
  });

  it("instantiates a class once and keeps that instance across runs", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("class-agent.mjs"));
    const first = await runValid(adapter);
    const second = await runValid(adapter);
    expect(first.segment.state).toEqual({ runs: 1 });
    expect(second.segment.state).toEqual({ runs: 2 });
  });
});

describe("module adapter › @ag-ui/client AbstractAgent", () => {
  it("loads a subclass, runs a fresh instance per run, and yields protocol-valid events", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("abstract-agent.mjs"));
    const { segment } = await runValid(adapter);
    expect(lastText(segment)).toBe("Hello from an AbstractAgent");
    expect(segment.state).toEqual({ seenMessages: 1, agentThread: "thread-m" });
  });

  it("loads an instance and keeps its own fields in the per-run clone", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("abstract-agent.mjs", "greetingInstance"));
    const { segment } = await runValid(adapter);
    expect(lastText(segment)).toBe("Hello from an instance");
    const mod = await import(moduleConfig("abstract-agent.mjs").specifier);
    // The exported instance itself is untouched by runs: each run works on a clone.
    expect(mod.greetingInstance.threadId).not.toBe("thread-m");
    expect(mod.greetingInstance.isRunning).toBe(false);
  });

  it("applies the agent's middlewares as runAgent would", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("abstract-agent.mjs", "shoutingInstance"));
    const { segment } = await runValid(adapter);
    expect(lastText(segment)).toBe("HELLO FROM AN ABSTRACTAGENT");
  });

  it("unsubscribes (the Observable's teardown runs) when the run is aborted", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("abstract-agent.mjs", "EndlessAgent"));
    const g = globalThis as { __endlessAgentTeardowns?: number };
    const before = g.__endlessAgentTeardowns ?? 0;
    const controller = new AbortController();
    const seen: Ev[] = [];
    for await (const event of adapter.run(input(), context(controller.signal))) {
      seen.push(event as Ev);
      if (seen.length === 5) controller.abort();
    }
    expect(seen.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
    ]);
    expect(g.__endlessAgentTeardowns).toBe(before + 1);
  });

  it("unsubscribes when the consumer stops early", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("abstract-agent.mjs", "EndlessAgent"));
    const g = globalThis as { __endlessAgentTeardowns?: number };
    const before = g.__endlessAgentTeardowns ?? 0;
    for await (const event of adapter.run(input(), context())) {
      if ((event as Ev).type === "TEXT_MESSAGE_CONTENT") break;
    }
    expect(g.__endlessAgentTeardowns).toBe(before + 1);
  });

  it("throws the Observable's error after the events that preceded it", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("abstract-agent.mjs", "FailingAgent"));
    const seen: Ev[] = [];
    await expect(async () => {
      for await (const event of adapter.run(input(), context())) seen.push(event as Ev);
    }).rejects.toThrow("observable agent failed");
    expect(seen.map((e) => e.type)).toEqual(["RUN_STARTED"]);
  });

  it("fails the run instead of buffering without limit when the agent floods", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("abstract-agent.mjs", "FloodAgent"));
    let count = 0;
    await expect(async () => {
      for await (const _ of adapter.run(input(), context())) count++;
    }).rejects.toThrow(/more than 10000 events/);
    expect(count).toBe(10_000);
  });
});

describe("module adapter › errors", () => {
  it("names the module when it cannot be imported", async () => {
    const config = moduleConfig("does-not-exist.mjs");
    await expect(loadModuleAdapter(config)).rejects.toThrow(
      /module "test\/fixtures\/modules\/does-not-exist\.mjs" .*cannot be imported/,
    );
  });

  it("names the module and export when the export is missing", async () => {
    await expect(loadModuleAdapter(moduleConfig("generator-agent.mjs", "nope"))).rejects.toThrow(
      /module "test\/fixtures\/modules\/generator-agent\.mjs" .*export "nope": no such export \(the module exports "arrayAgent", "default", "objectAgent"\)/,
    );
  });

  it.each([
    ["default", /export "default": not an agent: .*got number 42/],
    ["config", /export "config": not an agent: .*got an object without a run method/],
    ["NeedsArguments", /export "NeedsArguments": new NeedsArguments\(\) threw/],
  ])("rejects the export %s of the wrong shape, naming it", async (name, pattern) => {
    const error = await loadModuleAdapter(moduleConfig("bad-export.mjs", name)).catch((e) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(pattern);
    expect(error.message).toContain("bad-export.mjs");
  });

  it("rejects a class without a run method", async () => {
    await expect(loadModuleAdapter(moduleConfig("class-agent.mjs", "NoRunMethod"))).rejects.toThrow(
      /export "NoRunMethod": not an agent: .*class NoRunMethod without a run method/,
    );
  });

  it("propagates an error a generator throws at run time", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("throwing-agent.mjs"));
    const seen: Ev[] = [];
    await expect(async () => {
      for await (const event of adapter.run(input(), context())) seen.push(event as Ev);
    }).rejects.toThrow("the agent broke on purpose");
    expect(seen.map((e) => e.type)).toEqual(["RUN_STARTED"]);
  });

  it("propagates an error run() throws before returning", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("throwing-agent.mjs", "throwsAtCall"));
    await expect(collect(adapter, input())).rejects.toThrow("run itself threw");
  });

  it("names the module when run() returns something that is not events", async () => {
    const adapter = await loadModuleAdapter(moduleConfig("throwing-agent.mjs", "returnsNumber"));
    await expect(collect(adapter, input())).rejects.toThrow(
      /throwing-agent\.mjs.*run\(\) returned number 42/,
    );
  });
});

describe("fromObservable", () => {
  it("delivers values emitted synchronously during subscribe, then completes", async () => {
    const observable = {
      subscribe(observer: { next(v: number): void; complete(): void }) {
        observer.next(1);
        observer.next(2);
        observer.complete();
        return { unsubscribe() {} };
      },
    };
    const values: number[] = [];
    for await (const value of fromObservable(observable as never, new AbortController().signal)) {
      values.push(value as number);
    }
    expect(values).toEqual([1, 2]);
  });

  it("does not subscribe when the signal is already aborted", async () => {
    let subscribed = false;
    const observable = {
      subscribe() {
        subscribed = true;
        return { unsubscribe() {} };
      },
    };
    const controller = new AbortController();
    controller.abort();
    for await (const _ of fromObservable(observable as never, controller.signal)) {
      // nothing
    }
    expect(subscribed).toBe(false);
  });
});

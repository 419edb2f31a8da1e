/**
 * The `module` adapter: an agent written in TypeScript/JavaScript and loaded in-process with
 * `import()`. The named export may be
 *
 * - our adapter shape: an object with `run(input, context)`, or a class with such a method
 *   (instantiated once, with no arguments), or a function `(input, context) => events`;
 * - an @ag-ui/client `AbstractAgent` instance or subclass, recognised by duck typing (`run`,
 *   `runAgent` and `clone` methods) since @ag-ui/client is not a runtime dependency. Each run
 *   gets a fresh agent (a new instance of the class, or a clone of the instance), because such
 *   agents keep per-run state (an HttpAgent's abort controller). Its `run(input)` Observable
 *   is consumed directly, through the agent's middlewares as `runAgent` would, but without
 *   `runAgent`'s applying of events to the agent's own messages and state: the server's
 *   pipeline does that.
 *
 * Whatever `run` returns may be an AsyncIterable, an Iterable or an Observable of events.
 */
import type { RunAgentInput } from "@ag-ui/core";
import { fromObservable, isObservableLike } from "./module-observable.js";
import type { ModuleAdapterConfig } from "./module-options.js";
import type { AdapterRunContext, AgentAdapter } from "./types.js";

type Rec = Record<string, unknown>;
type RunFunction = (input: RunAgentInput, context: AdapterRunContext) => unknown;

/** The @ag-ui/client AbstractAgent surface this adapter relies on. */
interface AgUiAgentLike {
  run(input: RunAgentInput): unknown;
  clone(): AgUiAgentLike;
  abortRun?(): void;
  middlewares?: unknown;
  threadId?: unknown;
  messages?: unknown;
  state?: unknown;
}

const isRecord = (value: unknown): value is Rec =>
  (typeof value === "object" || typeof value === "function") && value !== null;

function isAgUiAgent(value: unknown): value is AgUiAgentLike {
  return (
    isRecord(value) &&
    typeof value.run === "function" &&
    typeof value.runAgent === "function" &&
    typeof value.clone === "function"
  );
}

const isClass = (fn: unknown): boolean => /^class[\s{]/.test(Function.prototype.toString.call(fn));

/**
 * Imports the module a config names and adapts its export. Throws, naming the module and
 * the export, when the module does not load or the export is missing or not an agent.
 */
export async function loadModuleAdapter(config: ModuleAdapterConfig): Promise<AgentAdapter> {
  const exportName = config.export ?? "default";
  const label =
    config.path && config.path !== config.specifier
      ? `module "${config.path}" (${config.specifier})`
      : `module "${config.specifier}"`;
  const fail = (detail: string): Error => new Error(`${label}, export "${exportName}": ${detail}`);

  let namespace: Rec;
  try {
    namespace = (await import(config.specifier)) as Rec;
  } catch (err) {
    throw new Error(`${label} cannot be imported: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
    });
  }
  if (!(exportName in namespace) || namespace[exportName] === undefined) {
    const names = Object.keys(namespace)
      .filter((name) => namespace[name] !== undefined)
      .sort();
    throw fail(
      `no such export (the module exports ${names.length > 0 ? names.map((n) => `"${n}"`).join(", ") : "nothing"})`,
    );
  }
  const target = namespace[exportName];
  const wrongShape = (got: string) =>
    fail(
      `not an agent: expected an object or class with a run(input, context) method, a function (input, context) => events, or an @ag-ui/client AbstractAgent; got ${got}`,
    );

  if (typeof target === "function") {
    const prototype = (target as { prototype?: Rec }).prototype;
    if (!isClass(target) && typeof prototype?.run !== "function") {
      return new ObjectAdapter(label, { run: target as RunFunction });
    }
    let instance: unknown;
    try {
      instance = new (target as new () => unknown)();
    } catch (err) {
      throw fail(`new ${target.name || "(class)"}() threw: ${(err as Error)?.message ?? err}`);
    }
    if (isAgUiAgent(instance)) {
      const AgentClass = target as new () => AgUiAgentLike;
      return new AgUiAgentAdapter(label, () => new AgentClass());
    }
    if (isRecord(instance) && typeof instance.run === "function") {
      return new ObjectAdapter(label, instance as Rec & { run: RunFunction });
    }
    throw wrongShape(`class ${target.name || "(anonymous)"} without a run method`);
  }
  if (isAgUiAgent(target)) return new AgUiAgentAdapter(label, () => freshClone(target));
  if (isRecord(target) && typeof target.run === "function") {
    return new ObjectAdapter(label, target as Rec & { run: RunFunction });
  }
  throw wrongShape(describeValue(target));
}

/** Our shape: one object serves every run. */
class ObjectAdapter implements AgentAdapter {
  constructor(
    private readonly label: string,
    private readonly target: Rec & { run: RunFunction },
  ) {
    const { capabilities, close } = target;
    if (typeof capabilities === "function") {
      this.capabilities = () => capabilities.call(target);
    }
    if (typeof close === "function") {
      this.close = async () => {
        await close.call(target);
      };
    }
  }

  capabilities?: AgentAdapter["capabilities"];
  close?: AgentAdapter["close"];

  async *run(input: RunAgentInput, context: AdapterRunContext): AsyncIterable<unknown> {
    yield* events(await this.target.run(input, context), context.signal, this.label);
  }
}

/** An @ag-ui/client agent: a fresh one per run, its `run` Observable as the events. */
class AgUiAgentAdapter implements AgentAdapter {
  constructor(
    private readonly label: string,
    private readonly fresh: () => AgUiAgentLike,
  ) {}

  async *run(input: RunAgentInput, context: AdapterRunContext): AsyncIterable<unknown> {
    const agent = this.fresh();
    // An agent that reads its own fields rather than the input sees the thread as it is.
    if ("threadId" in agent) agent.threadId = input.threadId;
    if ("messages" in agent) agent.messages = structuredClone(input.messages);
    if ("state" in agent) agent.state = structuredClone(input.state ?? {});
    let finished = false;
    try {
      yield* events(throughMiddlewares(agent, input), context.signal, this.label);
      // The Observable bridge ends quietly when the signal aborts: that is a stop, not an end.
      finished = !context.signal.aborted;
    } finally {
      // Unsubscribing stops the Observable; abortRun also stops what it started outside it (an
      // HttpAgent's fetch, a LangGraphAgent's run on its server, for which it is the only stop
      // signal). Safe: this agent is this run's own.
      if (!finished) agent.abortRun?.();
    }
  }
}

/**
 * `agent.run(input)` through the agent's middlewares (`use(...)`), chained as `runAgent`
 * chains them: each middleware's `run(input, next)` gets the rest of the chain as `next`.
 */
function throughMiddlewares(agent: AgUiAgentLike, input: RunAgentInput): unknown {
  const middlewares = Array.isArray(agent.middlewares)
    ? (agent.middlewares as unknown[]).filter(
        (m): m is { run(input: RunAgentInput, next: unknown): unknown } =>
          isRecord(m) && typeof m.run === "function",
      )
    : [];
  const chain = middlewares.reduceRight<{ run(input: RunAgentInput): unknown }>(
    (next, middleware) => ({
      run: (i: RunAgentInput) => middleware.run(i, next),
      get messages() {
        return (next as AgUiAgentLike).messages;
      },
      get state() {
        return (next as AgUiAgentLike).state;
      },
    }),
    agent,
  );
  return chain.run(input);
}

/**
 * A per-run copy of an agent instance. AbstractAgent's `clone` copies only the fields it
 * knows; the instance's own other fields (a subclass's configuration) are carried over.
 */
function freshClone(agent: AgUiAgentLike): AgUiAgentLike {
  const copy = agent.clone();
  for (const key of Object.keys(agent)) {
    if (!(key in copy)) (copy as unknown as Rec)[key] = (agent as unknown as Rec)[key];
  }
  return copy;
}

/** Normalises what a `run` returned into an AsyncIterable of events. */
function events(result: unknown, signal: AbortSignal, label: string): AsyncIterable<unknown> {
  if (isRecord(result)) {
    const candidate = result as Partial<AsyncIterable<unknown> & Iterable<unknown>>;
    if (typeof candidate[Symbol.asyncIterator] === "function") {
      return candidate as AsyncIterable<unknown>;
    }
    if (isObservableLike(result)) return fromObservable(result, signal);
    if (typeof candidate[Symbol.iterator] === "function") {
      return toAsync(candidate as Iterable<unknown>);
    }
  }
  throw new Error(
    `${label}: run() returned ${describeValue(result)}, not an AsyncIterable, Iterable or Observable of AG-UI events`,
  );
}

async function* toAsync(iterable: Iterable<unknown>): AsyncIterable<unknown> {
  yield* iterable;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") {
    const name = (value as object).constructor?.name;
    return name && name !== "Object" ? `an instance of ${name}` : "an object without a run method";
  }
  return `${typeof value} ${JSON.stringify(value) ?? ""}`.trim();
}

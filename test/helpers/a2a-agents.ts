/**
 * Real A2A agents for the `a2a` adapter tests, built on `@a2a-js/sdk`'s own server pieces
 * (DefaultRequestHandler, InMemoryTaskStore, the Express JSON-RPC, HTTP+JSON and agent card
 * handlers) and served on 127.0.0.1 (port 0). What an agent does is chosen by the first word
 * of the user's text:
 *
 * - `hello …`  a task completed with the status message `echo: <text>`
 * - `reply …`  a direct Message answer, no task
 * - `chunks`   one artifact streamed in three chunks (append, then lastChunk), then completed
 * - `data`     an artifact with a text part and a data part `{answer: 42}`, then completed
 * - `ask`      input-required ("What is your name?"); the answer on the same task completes
 *              it with `Hello, <answer>`
 * - `wait`     working until its task is canceled
 * - `drop`     one chunk, then the streamed request's connection is destroyed; the second
 *              chunk and the completion follow once the client subscribes again
 * - `fail`     failed, with the status message `the agent broke`
 *
 * Everything the agent saw is recorded: each message (text, data, taskId, contextId, whether it
 * continued a task), the canceled tasks, the re-subscriptions, and the headers of each request.
 */
import { once } from "node:events";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { AgentCard, Message, Part, Task } from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import { legacyAgentCardRouter } from "@a2a-js/sdk/compat/v0_3/server/express";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import {
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
} from "@a2a-js/sdk/server";
import {
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
  UserBuilder,
} from "@a2a-js/sdk/server/express";
import express from "express";

export interface SeenMessage {
  text: string;
  data: unknown[];
  taskId: string;
  contextId: string;
  messageId: string;
  /** The message continued an existing task (an answer to input-required). */
  continued: boolean;
}

export interface A2aTestAgent {
  /** The agent's base URL (its card is at /.well-known/agent-card.json). */
  url: string;
  cardUrl: string;
  seen: SeenMessage[];
  canceled: string[];
  resubscribed: string[];
  /** Request headers, lower-case, in arrival order. */
  headers: Record<string, string | string[] | undefined>[];
  /** Changes the description its card gives from now on. */
  describe(description: string): void;
  /** Resolves when the agent starts working on a message whose first word is `word`. */
  started(word: string): Promise<SeenMessage>;
  close(): Promise<void>;
}

export interface A2aAgentOptions {
  /** The card's `capabilities.streaming` (default true). */
  streaming?: boolean;
  /** Which interfaces the card lists, in order (default both, JSON-RPC first). */
  bindings?: ("JSONRPC" | "HTTP+JSON")[];
  name?: string;
  /**
   * An A2A 0.3 agent: its card is served in the 0.3 shape (to every client) and its JSON-RPC
   * interface speaks 0.3, through the SDK's own compatibility layer.
   */
  legacy?: boolean;
  /** Answers every send only when the task stops (ignoring `returnImmediately`). */
  blockingOnly?: boolean;
  /** Refuses a message whose contextId it did not issue itself (as A2A allows). */
  ownContexts?: boolean;
}

const part = (value: string): Part => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});

function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: crypto.randomUUID(),
    role: Role.ROLE_AGENT,
    parts: [part(text)],
    contextId,
    taskId,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export async function startA2aAgent(options: A2aAgentOptions = {}): Promise<A2aTestAgent> {
  const seen: SeenMessage[] = [];
  const canceled: string[] = [];
  const resubscribed: string[] = [];
  const headers: A2aTestAgent["headers"] = [];
  const waiters = new Map<string, ((message: SeenMessage) => void)[]>();
  const cancelSignals = new Map<string, () => void>();
  let resubscribe: (() => void) | undefined;
  /** The sockets of streamed sends, newest last: `drop` destroys the newest. */
  const streamSockets: Socket[] = [];

  const status = (bus: ExecutionEventBus, ctx: RequestContext, state: TaskState, text?: string) =>
    bus.publish({
      kind: "statusUpdate",
      data: {
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        status: {
          state,
          message: text === undefined ? undefined : agentMessage(ctx.taskId, ctx.contextId, text),
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      },
    });
  const artifact = (
    bus: ExecutionEventBus,
    ctx: RequestContext,
    parts: Part[],
    chunk: { append: boolean; lastChunk: boolean },
  ) =>
    bus.publish({
      kind: "artifactUpdate",
      data: {
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        artifact: {
          artifactId: `${ctx.taskId}-answer`,
          name: "answer",
          description: "",
          parts,
          metadata: undefined,
          extensions: [],
        },
        ...chunk,
        metadata: undefined,
      },
    });

  const executor: AgentExecutor = {
    async execute(ctx, bus) {
      const message = ctx.userMessage;
      const texts = message.parts.flatMap((p) =>
        p.content?.$case === "text" ? [p.content.value] : [],
      );
      const data = message.parts.flatMap((p) =>
        p.content?.$case === "data" ? [p.content.value] : [],
      );
      const text = texts.join("\n");
      const record: SeenMessage = {
        text,
        data,
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        messageId: message.messageId,
        continued: ctx.task !== undefined,
      };
      seen.push(record);
      issued.add(ctx.contextId);

      if (ctx.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        // A stream must open with the task, as it stands, before its updates.
        bus.publish({ kind: "task", data: ctx.task });
        const name = text || JSON.stringify(data[0]);
        status(bus, ctx, TaskState.TASK_STATE_COMPLETED, `Hello, ${name}`);
        bus.finished();
        return;
      }
      const word = text.trim().split(/\s+/)[0] ?? "";
      for (const waiter of waiters.get(word) ?? []) waiter(record);
      waiters.delete(word);

      if (word === "reply") {
        bus.publish({ kind: "message", data: agentMessage("", ctx.contextId, `reply: ${text}`) });
        bus.finished();
        return;
      }
      const task: Task = {
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
        artifacts: [],
        history: [message],
        metadata: undefined,
      };
      bus.publish({ kind: "task", data: task });
      status(bus, ctx, TaskState.TASK_STATE_WORKING);
      switch (word) {
        case "chunks":
          artifact(bus, ctx, [part("one ")], { append: false, lastChunk: false });
          artifact(bus, ctx, [part("two ")], { append: true, lastChunk: false });
          artifact(bus, ctx, [part("three")], { append: true, lastChunk: true });
          status(bus, ctx, TaskState.TASK_STATE_COMPLETED);
          break;
        case "data":
          artifact(
            bus,
            ctx,
            [
              part("the answer is attached"),
              {
                content: { $case: "data", value: { answer: 42 } },
                metadata: undefined,
                filename: "",
                mediaType: "application/json",
              },
            ],
            { append: false, lastChunk: true },
          );
          status(bus, ctx, TaskState.TASK_STATE_COMPLETED);
          break;
        case "ask":
          status(bus, ctx, TaskState.TASK_STATE_INPUT_REQUIRED, "What is your name?");
          break;
        case "wait":
          status(bus, ctx, TaskState.TASK_STATE_WORKING, "working on it");
          await new Promise<void>((resolve) => cancelSignals.set(ctx.taskId, resolve));
          return;
        case "drop": {
          artifact(bus, ctx, [part("before the drop, ")], { append: false, lastChunk: false });
          await new Promise((resolve) => setTimeout(resolve, 100));
          const again = new Promise<void>((resolve) => {
            resubscribe = resolve;
          });
          streamSockets.at(-1)?.destroy();
          await again;
          artifact(bus, ctx, [part("after it")], { append: true, lastChunk: true });
          status(bus, ctx, TaskState.TASK_STATE_COMPLETED);
          break;
        }
        case "fail":
          status(bus, ctx, TaskState.TASK_STATE_FAILED, "the agent broke");
          break;
        default:
          status(bus, ctx, TaskState.TASK_STATE_COMPLETED, `echo: ${text}`);
      }
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      canceled.push(taskId);
      bus.publish({
        kind: "statusUpdate",
        data: {
          taskId,
          contextId: "",
          status: {
            state: TaskState.TASK_STATE_CANCELED,
            message: undefined,
            timestamp: undefined,
          },
          metadata: undefined,
        },
      });
      bus.finished();
      cancelSignals.get(taskId)?.();
    },
  };

  const issued = new Set<string>();
  const checkContext = (params: { message?: Message }) => {
    const contextId = params.message?.contextId;
    if (options.ownContexts && contextId && !issued.has(contextId)) {
      throw new RequestMalformedError(`contextId ${contextId} was not issued by this agent`);
    }
  };

  class RecordingHandler extends DefaultRequestHandler {
    override async *sendMessageStream(
      ...args: Parameters<DefaultRequestHandler["sendMessageStream"]>
    ) {
      checkContext(args[0]);
      yield* super.sendMessageStream(...args);
    }

    override sendMessage(...args: Parameters<DefaultRequestHandler["sendMessage"]>) {
      const [params, context] = args;
      checkContext(params);
      if (!options.blockingOnly || !params.configuration) return super.sendMessage(params, context);
      const configuration = { ...params.configuration, returnImmediately: false };
      return super.sendMessage({ ...params, configuration }, context);
    }

    override resubscribe(...args: Parameters<DefaultRequestHandler["resubscribe"]>) {
      resubscribed.push(args[0].id);
      const generator = super.resubscribe(...args);
      // Let the agent go on once the new subscriber is attached.
      setTimeout(() => resubscribe?.(), 50);
      return generator;
    }
  }

  const app = express();
  const server: Server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  const base = `http://127.0.0.1:${port}`;
  const bindings = options.bindings ?? ["JSONRPC", "HTTP+JSON"];
  const card: AgentCard = {
    name: options.name ?? "sdk-test-agent",
    description: "A test agent built on the A2A SDK",
    supportedInterfaces: bindings.map((binding) => ({
      url: binding === "JSONRPC" ? `${base}/a2a/jsonrpc` : `${base}/a2a/rest`,
      protocolBinding: binding,
      tenant: "",
      protocolVersion: options.legacy ? "0.3" : "1.0",
    })),
    provider: undefined,
    version: "2.1.0",
    capabilities: {
      streaming: options.streaming ?? true,
      pushNotifications: false,
      extensions: [],
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [
      {
        id: "greet",
        name: "Greeting",
        description: "Answers a greeting",
        tags: ["demo"],
        examples: ["hello there"],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
  const handler = new RecordingHandler(card, new InMemoryTaskStore(), executor);
  app.use((req, _res, next) => {
    headers.push({ ...req.headers });
    if (req.method === "POST" && req.path.endsWith("stream")) streamSockets.push(req.socket);
    else if (req.method === "POST" && req.path === "/a2a/jsonrpc") {
      // JSON-RPC streams and sends share one path: the body says which, and only streams drop.
      streamSockets.push(req.socket);
    }
    next();
  });
  const legacyCompat = { enabled: options.legacy === true };
  if (options.legacy) {
    // A 0.3 agent answers its card in the 0.3 shape whatever version the client asks for.
    app.use("/.well-known/agent-card.json", (req, _res, next) => {
      req.headers["a2a-version"] = "0.3";
      next();
    });
    app.use("/.well-known/agent-card.json", legacyAgentCardRouter({ agentCardProvider: handler }));
  } else {
    app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
  }
  app.use(
    "/a2a/jsonrpc",
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat,
    }),
  );
  app.use(
    "/a2a/rest",
    restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  );

  return {
    url: base,
    cardUrl: `${base}/.well-known/agent-card.json`,
    seen,
    canceled,
    resubscribed,
    headers,
    describe: (description) => {
      card.description = description;
    },
    started: (word) =>
      new Promise((resolve) => {
        const list = waiters.get(word) ?? [];
        list.push(resolve);
        waiters.set(word, list);
      }),
    close: async () => {
      for (const resolve of cancelSignals.values()) resolve();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

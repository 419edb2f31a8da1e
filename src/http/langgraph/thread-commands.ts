import type { FastifyPluginAsync } from "fastify";
import type { Principal } from "../../auth/principal.js";
import { toLangGraphValues } from "../../bridge/langgraph/values.js";
import { invalid } from "../../util/errors.js";
import { threadIdParams } from "../params.js";
import { LangGraphRuns } from "./run-handlers.js";
import { streamThreadEvents } from "./thread-stream.js";
import { objectBody } from "./threads.js";

type Rec = Record<string, unknown>;
type ThreadParams = { Params: { thread_id: string } };

const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A v2 command `{id, method, params}`, or a 422 naming what is wrong. */
function parseCommand(body: unknown): { id: number; method: string; params: Rec } {
  const rec = objectBody(body);
  if (!Number.isSafeInteger(rec.id) || (rec.id as number) < 0) {
    throw invalid("id must be a non-negative integer (the command's id)");
  }
  if (typeof rec.method !== "string") throw invalid("method must be a string");
  const params = rec.params ?? {};
  if (!isRecord(params)) throw invalid("params must be an object");
  return { id: rec.id as number, method: rec.method, params };
}

/**
 * `input.respond`'s answers as a `command.resume` map by interrupt id: one
 * `{interrupt_id, response}`, or `responses: [{interrupt_id, response}, …]`.
 */
function answersOf(params: Rec): Rec {
  const entries = params.responses === undefined ? [params] : params.responses;
  if (!Array.isArray(entries) || entries.length === 0) {
    throw invalid("input.respond: responses must be a non-empty list");
  }
  const answers: Rec = {};
  for (const entry of entries) {
    if (!isRecord(entry) || typeof entry.interrupt_id !== "string" || entry.interrupt_id === "") {
      throw invalid("input.respond: each answer needs an interrupt_id (a string)");
    }
    if (Array.isArray(entry.namespace) && entry.namespace.length > 0) {
      throw invalid("input.respond: only interrupts of the root namespace ([]) are served");
    }
    if (!("response" in entry)) throw invalid("input.respond: each answer needs a response");
    answers[entry.interrupt_id] = entry.response;
  }
  return answers;
}

/**
 * LangGraph's v2 thread streaming (what `client.threads.stream` and `@langchain/react` use):
 * commands on a thread, answered `{type: "success", id, result}`, and the thread's event
 * stream (thread-stream.ts). Commands start runs as the v1 paths do; a command we do not serve,
 * or one that is malformed, is a 422 naming it.
 */
export const threadCommandRoutes: FastifyPluginAsync = async (app) => {
  const { runs, threads, registry, settings } = app.deps;
  const handlers = new LangGraphRuns({
    runs,
    threads,
    registry,
    keepAliveSeconds: settings.keepAliveSeconds,
  });

  const commands: Record<string, (who: Principal, threadId: string, params: Rec) => Promise<Rec>> =
    {
      "run.start": async (who, threadId, params) => {
        const { multitaskStrategy, multitask_strategy, ...body } = params;
        const run = await handlers.create(
          who,
          "stateful",
          { ...body, multitask_strategy: multitask_strategy ?? multitaskStrategy },
          threadId,
        );
        return { run_id: run.run_id };
      },
      "input.respond": async (who, threadId, params) => {
        for (const field of ["update", "goto"]) {
          if (params[field] !== undefined) throw invalid(`input.respond: ${field} is not served`);
        }
        const resume = answersOf(params);
        const interrupted = await handlers.interruptedRun(
          who,
          threadId,
          `thread ${threadId} has no interrupt for input.respond to answer`,
        );
        const run = await handlers.create(
          who,
          "stateful",
          {
            assistant_id: handlers.agentName(interrupted),
            command: { resume },
            ...(params.config !== undefined && { config: params.config }),
            ...(params.metadata !== undefined && { metadata: params.metadata }),
          },
          threadId,
        );
        return { run_id: run.run_id };
      },
      "state.get": async (who, threadId, params) => {
        if (Array.isArray(params.namespace) && params.namespace.length > 0) {
          throw invalid("state.get: only the root namespace ([]) is served");
        }
        const thread = await threads.get(who, threadId);
        const values = toLangGraphValues(thread.values, thread.messages);
        const keys = params.keys;
        const picked = Array.isArray(keys)
          ? Object.fromEntries(Object.entries(values).filter(([key]) => keys.includes(key)))
          : values;
        return thread.checkpoint_id
          ? { values: picked, checkpoint: { id: thread.checkpoint_id } }
          : { values: picked };
      },
    };

  app.post<ThreadParams>(
    "/threads/:thread_id/commands",
    { schema: { params: threadIdParams } },
    async (request) => {
      const command = parseCommand(request.body);
      const handle = commands[command.method];
      if (!handle) {
        throw invalid(
          `command ${command.method} is not served; commands: ${Object.keys(commands).join(", ")}`,
        );
      }
      const result = await handle(request.caller, request.params.thread_id, command.params);
      return { type: "success", id: command.id, result };
    },
  );

  app.post<ThreadParams>(
    "/threads/:thread_id/stream/events",
    { schema: { params: threadIdParams } },
    async (request, reply) => {
      await streamThreadEvents(
        { runs, threads, keepAliveSeconds: settings.keepAliveSeconds },
        request,
        reply,
        request.params.thread_id,
        (run) => handlers.agentName(run),
      );
    },
  );
};

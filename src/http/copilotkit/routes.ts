import type { RunAgentInput } from "@ag-ui/core";
import type { FastifyError, FastifyPluginAsync, FastifyRequest } from "fastify";
import { isDomainError } from "../../util/errors.js";
import { packageVersion } from "../../util/paths.js";
import { aguiValidator, describeErrors } from "../../validation/index.js";
import { AguiRuns, callerThreadId } from "../agui-runs/agui-runs.js";
import { stopRuns } from "../agui-runs/stop-runs.js";
import { sendError } from "../errors.js";
import { registerJsonBodyParser } from "../json-body.js";
import { agentFor, runtimeInfo, visibleAgents } from "./agents.js";
import { threadEvents, threadMessages, threadState } from "./inspect.js";
import {
  deleteThread,
  listThreads,
  ownedThread,
  renameThread,
  setArchived,
  tagThread,
  toCopilotThread,
} from "./threads.js";

/** A body CopilotKit's client would not send: 400, as its runtime answers. */
class BadBody extends Error {
  readonly statusCode = 400;
}

const text = { type: "string", minLength: 1, maxLength: 1000 } as const;
const agentParams = {
  type: "object",
  properties: { agent: text },
  required: ["agent"],
} as const;
const stopParams = {
  type: "object",
  properties: { agent: text, thread: text },
  required: ["agent", "thread"],
} as const;
const threadParams = {
  type: "object",
  properties: { thread: text },
  required: ["thread"],
} as const;
const listQuery = {
  type: "object",
  properties: {
    agentId: text,
    includeArchived: { enum: ["true", "false"] },
    limit: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
    cursor: { type: "string", pattern: "^[0-9]{1,15}$" },
  },
  required: ["agentId"],
  additionalProperties: false,
} as const;

/**
 * CopilotKit's runtime protocol in REST mode, under `server.copilotkit.basePath`: a CopilotKit
 * app whose `runtimeUrl` is this base talks to every configured agent. Runs are AG-UI face runs
 * that go on when the page goes away; `connect` replays the thread and rejoins its run in
 * progress; `stop` ends a run as ACP's cancel does; the thread views read ACP threads.
 */
export const copilotkitRoutes: FastifyPluginAsync = async (app) => {
  const { registry, runs, threads, engine, settings } = app.deps;
  const face = new AguiRuns({
    runs,
    threads,
    keepAliveSeconds: settings.keepAliveSeconds,
    face: "copilotkit",
  });
  const version = packageVersion();

  // CopilotKit's client sends `content-type: application/json` with no body to stop a thread.
  registerJsonBodyParser(app, settings.limits, { allowEmpty: true });
  app.setErrorHandler((err: FastifyError, _request, reply) => {
    // CopilotKit's client understands 400 for a bad body; ACP's 422 is for ACP clients.
    if (err.validation || isDomainError(err, "invalid") || err.statusCode === 422) {
      return sendError(reply, 400, err.message);
    }
    throw err;
  });

  app.get("/info", async (request) =>
    runtimeInfo(version, visibleAgents(registry, request), engine),
  );

  app.post<{ Params: { agent: string } }>(
    "/agent/:agent/run",
    { schema: { params: agentParams }, config: { longRequest: "stream" } },
    async (request, reply) => {
      const agent = agentFor(registry, request, request.params.agent);
      const input = runInput(request.body);
      const { thread, newThreadMetadata } = await tagThread(
        threads,
        request.caller,
        input.threadId,
        agent.name,
      );
      await face.serve(request, reply, agent, input, {
        onDisconnect: "continue",
        ending: "close-then-end",
        thread,
        newThreadMetadata,
      });
    },
  );

  app.post<{ Params: { agent: string } }>(
    "/agent/:agent/connect",
    { schema: { params: agentParams }, config: { longRequest: "stream" } },
    async (request, reply) => {
      agentFor(registry, request, request.params.agent);
      const threadId = connectThreadId(request.body);
      await face.connect(request, reply, { threadId }, "close-then-end");
    },
  );

  app.post<{ Params: { agent: string; thread: string } }>(
    "/agent/:agent/stop/:thread",
    { schema: { params: stopParams } },
    async (request) => {
      agentFor(registry, request, request.params.agent);
      const stopped = await stopRuns(
        runs,
        request.caller,
        await callerThreadId(threads, request.caller, request.params.thread),
        stopRunId(request.body),
      );
      return stopped.length > 0
        ? {
            stopped: true,
            interrupt: { type: "RUN_ERROR", message: "Run stopped by user", code: "STOPPED" },
          }
        : { stopped: false, message: `No active run for thread '${request.params.thread}'.` };
    },
  );

  app.get<{
    Querystring: { agentId: string; includeArchived?: string; limit: number; cursor?: string };
  }>("/threads", { schema: { querystring: listQuery } }, async (request) => {
    const { agentId, includeArchived, limit, cursor } = request.query;
    const agent = agentFor(registry, request, agentId);
    return listThreads(threads, request.caller, agent.name, {
      includeArchived: includeArchived === "true",
      limit,
      offset: cursor === undefined ? 0 : Number(cursor),
    });
  });

  app.get<{ Params: { thread: string } }>(
    "/threads/:thread/messages",
    { schema: { params: threadParams } },
    async (request) => ({
      messages: await threadMessages(threads, request, request.params.thread),
    }),
  );
  app.get<{ Params: { thread: string } }>(
    "/threads/:thread/state",
    { schema: { params: threadParams } },
    async (request) => ({ state: await threadState(threads, request, request.params.thread) }),
  );
  app.get<{ Params: { thread: string } }>(
    "/threads/:thread/events",
    { schema: { params: threadParams } },
    async (request) => ({
      events: await threadEvents(threads, runs, request, request.params.thread),
    }),
  );

  // Mutations name the agent in the body, as CopilotKit's client sends them.
  const owned = async (request: FastifyRequest<{ Params: { thread: string } }>) => {
    const body = mutationBody(request.body);
    const agent = agentFor(registry, request, body.agentId);
    const thread = await ownedThread(threads, request.caller, request.params.thread, agent.name);
    return { body, thread };
  };
  app.patch<{ Params: { thread: string } }>(
    "/threads/:thread",
    { schema: { params: threadParams } },
    async (request) => {
      const { body, thread } = await owned(request);
      let updated = thread;
      if (typeof body.name === "string") updated = await renameThread(threads, updated, body.name);
      if (typeof body.archived === "boolean")
        updated = await setArchived(threads, updated, body.archived);
      return toCopilotThread(updated);
    },
  );
  app.post<{ Params: { thread: string } }>(
    "/threads/:thread/archive",
    { schema: { params: threadParams } },
    async (request) => {
      const { thread } = await owned(request);
      await setArchived(threads, thread, true);
      return { threadId: request.params.thread, archived: true };
    },
  );
  app.delete<{ Params: { thread: string } }>(
    "/threads/:thread",
    { schema: { params: threadParams } },
    async (request) => {
      const { thread } = await owned(request);
      await deleteThread(threads, thread);
      return { threadId: request.params.thread, deleted: true };
    },
  );
};

/** The run's RunAgentInput, checked as the AG-UI face checks it (but refused with 400). */
function runInput(body: unknown): RunAgentInput {
  const validate = aguiValidator("RunAgentInput");
  if (!validate(body)) throw new BadBody(describeErrors(validate.errors, "body"));
  return body as RunAgentInput;
}

/** `connect` sends a RunAgentInput too; only its threadId matters. */
function connectThreadId(body: unknown): string {
  const threadId = (body as { threadId?: unknown } | undefined)?.threadId;
  if (typeof threadId !== "string" || threadId === "") {
    throw new BadBody("body/threadId must be a non-empty string (the thread to connect to)");
  }
  return threadId;
}

/** `stop` sends `{runId}` or nothing at all. */
function stopRunId(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body !== "object" || Array.isArray(body)) {
    throw new BadBody('body must be an object such as {"runId": "…"}, or empty');
  }
  const runId = (body as { runId?: unknown }).runId;
  if (runId === undefined) return undefined;
  if (typeof runId !== "string" || runId === "") {
    throw new BadBody("body/runId must be a non-empty string");
  }
  return runId;
}

interface MutationBody {
  agentId: string;
  name?: string;
  archived?: boolean;
}

function mutationBody(body: unknown): MutationBody {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new BadBody('body must be an object naming the agent: {"agentId": "…"}');
  }
  const { agentId, name, archived } = body as Record<string, unknown>;
  if (typeof agentId !== "string" || agentId === "") {
    throw new BadBody("body/agentId must be a non-empty string");
  }
  if (name !== undefined && (typeof name !== "string" || name.length > 1000)) {
    throw new BadBody("body/name must be a string of at most 1000 characters");
  }
  if (archived !== undefined && typeof archived !== "boolean") {
    throw new BadBody("body/archived must be a boolean");
  }
  return body as MutationBody;
}

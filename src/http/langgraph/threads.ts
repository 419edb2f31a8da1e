import type { FastifyPluginAsync } from "fastify";
import type { Principal } from "../../auth/principal.js";
import { applyStateUpdate, toLangGraphInterrupts } from "../../bridge/langgraph/values.js";
import type { RunService } from "../../engine/run-service.js";
import type { AcpMessage, ThreadRecord, ThreadStatus } from "../../storage/types.js";
import { invalid } from "../../util/errors.js";
import { threadIdParams } from "../params.js";
import { toCheckpointState, toThread, toThreadState } from "./records.js";

type Rec = Record<string, unknown>;
type ThreadParams = { Params: { thread_id: string } };

const STATUSES = ["idle", "busy", "interrupted", "error"];

/** A JSON body as an object, or a 422 naming what it is instead. */
export function objectBody(body: unknown): Rec {
  if (body === undefined || body === null) return {};
  if (typeof body !== "object" || Array.isArray(body)) {
    throw invalid("the request body must be a JSON object");
  }
  return body as Rec;
}

function optionalObject(body: Rec, field: string): Rec | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value))
    throw invalid(`${field} must be an object`);
  return value as Rec;
}

function page(body: Rec, field: "limit" | "offset", fallback: number, max: number): number {
  const value = body[field] ?? fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > max) {
    throw invalid(`${field} must be an integer from 0 to ${max}`);
  }
  return value;
}

/** Every key of `wanted` is in `have` with an equal value (a metadata filter, as storage's). */
function contains(have: Rec, wanted: Rec): boolean {
  return Object.entries(wanted).every(
    ([key, value]) => JSON.stringify(have[key]) === JSON.stringify(value),
  );
}

/** The open interrupts of an interrupted thread, with the run that holds them. */
async function openInterrupts(runs: RunService, who: Principal, thread: ThreadRecord) {
  if (thread.status !== "interrupted") return undefined;
  const [run] = await runs.search(who, {
    thread_id: thread.thread_id,
    status: "interrupted",
    limit: 1,
    offset: 0,
  });
  if (!run) return undefined;
  return { run, interrupts: toLangGraphInterrupts(run.interrupts) };
}

/** Threads: ours, so one conversation whichever face it is reached through. */
export const threadRoutes: FastifyPluginAsync = async (app) => {
  const { threads, runs, registry } = app.deps;
  const nodeOf = (agentId: string) => registry.get(agentId)?.name ?? agentId;

  const asThread = async (who: Principal, thread: ThreadRecord) => {
    const open = await openInterrupts(runs, who, thread);
    return toThread(thread, open && { runId: open.run.run_id, interrupts: open.interrupts });
  };

  app.post("/threads", async (request) => {
    const body = objectBody(request.body);
    const { thread_id, if_exists, supersteps } = body;
    if (thread_id != null && typeof thread_id !== "string")
      throw invalid("thread_id must be a string");
    if (if_exists != null && if_exists !== "raise" && if_exists !== "do_nothing") {
      throw invalid("if_exists must be raise or do_nothing");
    }
    if (Array.isArray(supersteps) && supersteps.length > 0) {
      throw invalid("supersteps are not supported: an agent here is not a graph of nodes");
    }
    const metadata = Object.fromEntries(
      Object.entries(optionalObject(body, "metadata") ?? {}).filter(([, v]) => v != null),
    );
    const thread = await threads.create(request.caller, {
      thread_id: (thread_id as string | undefined) ?? undefined,
      metadata,
      if_exists: (if_exists as "raise" | "do_nothing" | undefined) ?? "raise",
    });
    return asThread(request.caller, thread);
  });

  app.post("/threads/search", async (request) => {
    const body = objectBody(request.body);
    const status = body.status;
    if (status != null && !STATUSES.includes(status as string)) {
      throw invalid(`status must be one of ${STATUSES.join(", ")}`);
    }
    const ids = body.ids;
    if (ids != null && !(Array.isArray(ids) && ids.every((id) => typeof id === "string"))) {
      throw invalid("ids must be a list of thread ids");
    }
    const limit = page(body, "limit", 10, 1000);
    const offset = page(body, "offset", 0, Number.MAX_SAFE_INTEGER);
    let found: ThreadRecord[];
    if (Array.isArray(ids)) {
      const reachable = await Promise.all(
        (ids as string[]).map((id) => threads.findReachable(request.caller, id)),
      );
      const metadata = optionalObject(body, "metadata") ?? {};
      found = reachable
        .filter((t): t is ThreadRecord => t !== undefined && !t.hidden)
        .filter((t) => status == null || t.status === status)
        .filter((t) => contains(t.metadata, metadata))
        .slice(offset, offset + limit);
    } else {
      found = await threads.search(request.caller, {
        metadata: optionalObject(body, "metadata"),
        values: optionalObject(body, "values"),
        status: (status as ThreadStatus | undefined) ?? undefined,
        limit,
        offset,
      });
    }
    return Promise.all(found.map((thread) => asThread(request.caller, thread)));
  });

  app.get<ThreadParams>(
    "/threads/:thread_id",
    { schema: { params: threadIdParams } },
    async (request) =>
      asThread(request.caller, await threads.get(request.caller, request.params.thread_id)),
  );

  app.patch<ThreadParams>(
    "/threads/:thread_id",
    { schema: { params: threadIdParams } },
    async (request) => {
      const metadata = optionalObject(objectBody(request.body), "metadata");
      const thread = await threads.patch(request.caller, request.params.thread_id, { metadata });
      return asThread(request.caller, thread);
    },
  );

  app.delete<ThreadParams>(
    "/threads/:thread_id",
    { schema: { params: threadIdParams } },
    async (request, reply) => {
      await threads.delete(request.caller, request.params.thread_id);
      return reply.code(204).send();
    },
  );

  app.post<ThreadParams>(
    "/threads/:thread_id/copy",
    { schema: { params: threadIdParams } },
    async (request) =>
      asThread(request.caller, await threads.copy(request.caller, request.params.thread_id)),
  );

  app.get<ThreadParams>(
    "/threads/:thread_id/state",
    { schema: { params: threadIdParams } },
    async (request) => {
      const thread = await threads.get(request.caller, request.params.thread_id);
      const [latest] = await threads.history(request.caller, thread.thread_id, { limit: 1 });
      const open = await openInterrupts(runs, request.caller, thread);
      return toThreadState(
        thread,
        latest,
        open && {
          runId: open.run.run_id,
          interrupts: open.interrupts,
          node: nodeOf(open.run.agent_id),
        },
      );
    },
  );

  const checkpointParams = {
    type: "object",
    properties: {
      thread_id: threadIdParams.properties.thread_id,
      checkpoint_id: { type: "string", minLength: 1, maxLength: 200 },
    },
    required: ["thread_id", "checkpoint_id"],
  } as const;

  app.get<{ Params: { thread_id: string; checkpoint_id: string } }>(
    "/threads/:thread_id/state/:checkpoint_id",
    { schema: { params: checkpointParams } },
    async (request) => {
      const { thread_id, checkpoint_id } = request.params;
      return toCheckpointState(await threads.checkpoint(request.caller, thread_id, checkpoint_id));
    },
  );

  app.post<ThreadParams>(
    "/threads/:thread_id/state/checkpoint",
    { schema: { params: threadIdParams } },
    async (request) => {
      const checkpoint = optionalObject(objectBody(request.body), "checkpoint");
      const id = checkpoint?.checkpoint_id;
      if (typeof id !== "string") throw invalid("checkpoint.checkpoint_id is required");
      return toCheckpointState(
        await threads.checkpoint(request.caller, request.params.thread_id, id),
      );
    },
  );

  // A state update: a new checkpoint of the thread (refused while a run is in progress).
  app.post<ThreadParams>(
    "/threads/:thread_id/state",
    { schema: { params: threadIdParams } },
    async (request) => {
      const body = objectBody(request.body);
      const from = body.checkpoint_id ?? optionalObject(body, "checkpoint")?.checkpoint_id;
      if (from != null && typeof from !== "string") throw invalid("checkpoint_id must be a string");
      const base = from
        ? await threads.checkpoint(request.caller, request.params.thread_id, from as string)
        : await threads.get(request.caller, request.params.thread_id);
      const next = applyStateUpdate(body.values, base.values, base.messages);
      const thread = await threads.patch(request.caller, request.params.thread_id, {
        values: next.values,
        messages: next.messages as unknown as AcpMessage[],
        checkpoint: from ? { checkpoint_id: from as string } : undefined,
      });
      const checkpoint = {
        thread_id: thread.thread_id,
        checkpoint_ns: "",
        checkpoint_id: thread.checkpoint_id,
      };
      return { checkpoint, configurable: checkpoint };
    },
  );

  const history = async (who: Principal, threadId: string, body: Rec) => {
    const limit = page(body, "limit", 10, 1000);
    const before = optionalObject(body, "before");
    const configurable = before && optionalObject(before, "configurable");
    const beforeId = configurable?.checkpoint_id ?? before?.checkpoint_id;
    if (beforeId != null && typeof beforeId !== "string") {
      throw invalid("before.configurable.checkpoint_id must be a checkpoint id");
    }
    const checkpoints = await threads.history(who, threadId, {
      limit: Math.max(1, limit),
      before: (beforeId as string | undefined) ?? undefined,
    });
    const metadata = optionalObject(body, "metadata");
    return checkpoints
      .filter((checkpoint) => contains(checkpoint.metadata, metadata ?? {}))
      .map(toCheckpointState);
  };

  app.post<ThreadParams>(
    "/threads/:thread_id/history",
    { schema: { params: threadIdParams } },
    async (request) => history(request.caller, request.params.thread_id, objectBody(request.body)),
  );

  app.get<ThreadParams & { Querystring: Rec }>(
    "/threads/:thread_id/history",
    {
      schema: {
        params: threadIdParams,
        querystring: {
          type: "object",
          properties: { limit: { type: "integer", minimum: 1, maximum: 1000 } },
        },
      },
    },
    async (request) => history(request.caller, request.params.thread_id, request.query),
  );
};

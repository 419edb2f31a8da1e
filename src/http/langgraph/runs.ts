import type { FastifyPluginAsync } from "fastify";
import type { RunStatus } from "../../storage/types.js";
import { invalid } from "../../util/errors.js";
import { runIdParams, threadIdParams, threadRunParams } from "../params.js";
import { LangGraphRuns } from "./run-handlers.js";

type ThreadParams = { Params: { thread_id: string } };
type RunParams = { Params: { thread_id: string; run_id: string } };
type StatelessRunParams = { Params: { run_id: string } };

const flag = { enum: ["0", "1", "true", "false"] } as const;
const joinQuery = {
  type: "object",
  properties: {
    cancel_on_disconnect: flag,
    stream_mode: {},
  },
} as const;
const cancelQuery = {
  type: "object",
  properties: { wait: flag, action: { enum: ["interrupt", "rollback"] } },
} as const;
const listQuery = {
  type: "object",
  properties: {
    limit: { type: "integer", minimum: 1, maximum: 1000 },
    offset: { type: "integer", minimum: 0 },
    status: { enum: ["pending", "running", "error", "success", "timeout", "interrupted"] },
  },
} as const;

const isOn = (value: unknown) => value === "1" || value === "true";

/** Runs on threads and stateless runs: created, streamed, awaited, joined, cancelled. */
export const runRoutes: FastifyPluginAsync = async (app) => {
  const { runs, threads, registry, settings } = app.deps;
  const handlers = new LangGraphRuns({
    runs,
    threads,
    registry,
    keepAliveSeconds: settings.keepAliveSeconds,
  });

  app.get<ThreadParams & { Querystring: { limit?: number; offset?: number; status?: string } }>(
    "/threads/:thread_id/runs",
    { schema: { params: threadIdParams, querystring: listQuery } },
    async (request) => {
      const { limit = 10, offset = 0, status } = request.query;
      const thread = await threads.get(request.caller, request.params.thread_id);
      // `running` is our `pending` once started; `interrupted` includes cancelled runs.
      const stored: RunStatus | undefined =
        status === "running"
          ? "pending"
          : status === "interrupted"
            ? undefined
            : (status as RunStatus);
      const found = await runs.search(request.caller, {
        thread_id: thread.thread_id,
        kind: "stateful",
        status: stored,
        limit,
        offset,
      });
      return found
        .map((run) => handlers.toRun(run))
        .filter((run) => !status || run.status === status);
    },
  );

  app.post<ThreadParams>(
    "/threads/:thread_id/runs",
    { schema: { params: threadIdParams } },
    async (request, reply) => {
      const run = await handlers.create(
        request.caller,
        "stateful",
        request.body,
        request.params.thread_id,
      );
      reply.header("content-location", `/threads/${run.thread_id}/runs/${run.run_id}`);
      return run;
    },
  );

  app.post<ThreadParams>(
    "/threads/:thread_id/runs/stream",
    { schema: { params: threadIdParams }, config: { longRequest: "stream" } },
    async (request, reply) =>
      handlers.createAndStream(request, reply, "stateful", request.body, request.params.thread_id),
  );

  app.post<ThreadParams>(
    "/threads/:thread_id/runs/wait",
    { schema: { params: threadIdParams }, config: { longRequest: "wait" } },
    async (request, reply) =>
      handlers.createAndWait(
        request.caller,
        reply,
        "stateful",
        request.body,
        request.params.thread_id,
      ),
  );

  app.get<RunParams>(
    "/threads/:thread_id/runs/:run_id",
    { schema: { params: threadRunParams } },
    async (request) => {
      const { run_id, thread_id } = request.params;
      return handlers.toRun(await runs.get(request.caller, run_id, "stateful", thread_id));
    },
  );

  app.delete<RunParams>(
    "/threads/:thread_id/runs/:run_id",
    { schema: { params: threadRunParams } },
    async (request, reply) => {
      const { run_id, thread_id } = request.params;
      await runs.delete(request.caller, run_id, "stateful", thread_id);
      return reply.code(204).send();
    },
  );

  app.get<RunParams>(
    "/threads/:thread_id/runs/:run_id/join",
    { schema: { params: threadRunParams }, config: { longRequest: "wait" } },
    async (request, reply) => {
      const { run_id, thread_id } = request.params;
      return handlers.join(request.caller, reply, "stateful", run_id, thread_id);
    },
  );

  app.get<RunParams>(
    "/threads/:thread_id/runs/:run_id/stream",
    {
      schema: { params: threadRunParams, querystring: joinQuery },
      config: { longRequest: "stream" },
    },
    async (request, reply) => {
      const { run_id, thread_id } = request.params;
      await handlers.joinStream(request, reply, "stateful", run_id, thread_id);
    },
  );

  app.post<RunParams & { Querystring: { wait?: string; action?: "interrupt" | "rollback" } }>(
    "/threads/:thread_id/runs/:run_id/cancel",
    { schema: { params: threadRunParams, querystring: cancelQuery } },
    async (request, reply) => {
      const { run_id, thread_id } = request.params;
      const wait = isOn(request.query.wait);
      const action = request.query.action ?? "interrupt";
      await runs.cancel(request.caller, run_id, "stateful", { action, wait }, thread_id);
      return reply.code(wait ? 204 : 202).send();
    },
  );

  // Stateless runs: each on a thread of its own that nobody else sees.

  app.post("/runs", async (request, reply) => {
    const run = await handlers.create(request.caller, "stateless", request.body);
    reply.header("content-location", `/runs/${run.run_id}`);
    return run;
  });

  app.post("/runs/stream", { config: { longRequest: "stream" } }, async (request, reply) =>
    handlers.createAndStream(request, reply, "stateless", request.body),
  );

  app.post("/runs/wait", { config: { longRequest: "wait" } }, async (request, reply) =>
    handlers.createAndWait(request.caller, reply, "stateless", request.body),
  );

  app.get<StatelessRunParams>(
    "/runs/:run_id/stream",
    { schema: { params: runIdParams, querystring: joinQuery }, config: { longRequest: "stream" } },
    async (request, reply) =>
      handlers.joinStream(request, reply, "stateless", request.params.run_id),
  );

  app.post<
    StatelessRunParams & { Querystring: { wait?: string; action?: "interrupt" | "rollback" } }
  >(
    "/runs/:run_id/cancel",
    { schema: { params: runIdParams, querystring: cancelQuery } },
    async (request, reply) => {
      const wait = isOn(request.query.wait);
      const action = request.query.action ?? "interrupt";
      await runs.cancel(request.caller, request.params.run_id, "stateless", { action, wait });
      return reply.code(wait ? 204 : 202).send();
    },
  );

  app.post("/runs/batch", async () => {
    throw invalid("runs/batch is not supported: create each run on its own");
  });
};

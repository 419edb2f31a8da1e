import type { FastifyPluginAsyncJsonSchemaToTs } from "@fastify/type-provider-json-schema-to-ts";
import { toAcpRun } from "../../engine/acp-mapping.js";
import { acpSchemas } from "../../validation/index.js";
import { cancelQuery, pageQuery, threadIdParams, threadRunParams } from "../params.js";
import { RunHandlers } from "./run-handlers.js";

const error = acpSchemas.ErrorResponse;
const sse = { 200: acpSchemas.RunOutputStream, 404: error, 409: error, 422: error } as const;

/** ACP "Thread Runs" tag: runs on a thread, created, streamed, awaited, resumed, cancelled. */
export const threadRunRoutes: FastifyPluginAsyncJsonSchemaToTs = async (app) => {
  const { runs, settings } = app.deps;
  const handlers = new RunHandlers(runs, settings.keepAliveSeconds);

  app.get(
    "/threads/:thread_id/runs",
    {
      schema: {
        params: threadIdParams,
        querystring: pageQuery,
        response: { 200: acpSchemas.RunStatefulList, 404: error, 422: error },
      },
    },
    async (request) => {
      const { limit = 10, offset = 0 } = request.query;
      return (
        await runs.listThreadRuns(request.caller, request.params.thread_id, limit, offset)
      ).map(toAcpRun);
    },
  );

  app.post(
    "/threads/:thread_id/runs",
    {
      schema: {
        params: threadIdParams,
        body: acpSchemas.RunCreateStateful,
        response: { 200: acpSchemas.RunStateful, 404: error, 409: error, 422: error },
      },
    },
    async (request) =>
      handlers.create(request.caller, "stateful", request.body, request.params.thread_id),
  );

  app.post(
    "/threads/:thread_id/runs/stream",
    {
      schema: { params: threadIdParams, body: acpSchemas.RunCreateStateful, response: sse },
      config: { longRequest: "stream" },
    },
    async (request, reply) =>
      handlers.createAndStream(request, reply, "stateful", request.body, request.params.thread_id),
  );

  app.post(
    "/threads/:thread_id/runs/wait",
    {
      schema: {
        params: threadIdParams,
        body: acpSchemas.RunCreateStateful,
        response: { 200: acpSchemas.RunWaitResponseStateful, 404: error, 409: error, 422: error },
      },
      config: { longRequest: "wait" },
    },
    async (request, reply) =>
      handlers.createAndWait(
        request.caller,
        reply,
        "stateful",
        request.body,
        request.params.thread_id,
      ),
  );

  app.get(
    "/threads/:thread_id/runs/:run_id",
    {
      schema: {
        params: threadRunParams,
        response: { 200: acpSchemas.RunStateful, 404: error, 422: error },
      },
    },
    async (request) =>
      toAcpRun(
        await runs.get(request.caller, request.params.run_id, "stateful", request.params.thread_id),
      ),
  );

  app.post(
    "/threads/:thread_id/runs/:run_id",
    {
      schema: {
        params: threadRunParams,
        body: acpSchemas.ResumePayloadSchema,
        response: { 200: acpSchemas.RunStateful, 404: error, 409: error, 422: error },
      },
    },
    async (request) => {
      const { run_id, thread_id } = request.params;
      return toAcpRun(
        await runs.resume(request.caller, run_id, "stateful", request.body, thread_id),
      );
    },
  );

  app.delete(
    "/threads/:thread_id/runs/:run_id",
    {
      schema: {
        params: threadRunParams,
        response: { 204: { type: "null" }, 404: error, 409: error, 422: error },
      },
    },
    async (request, reply) => {
      await runs.delete(
        request.caller,
        request.params.run_id,
        "stateful",
        request.params.thread_id,
      );
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/threads/:thread_id/runs/:run_id/stream",
    { schema: { params: threadRunParams, response: sse }, config: { longRequest: "stream" } },
    async (request, reply) =>
      handlers.join(request, reply, "stateful", request.params.run_id, request.params.thread_id),
  );

  app.get(
    "/threads/:thread_id/runs/:run_id/wait",
    {
      schema: {
        params: threadRunParams,
        response: { 200: acpSchemas.RunWaitResponseStateful, 404: error, 422: error },
      },
      config: { longRequest: "wait" },
    },
    async (request, reply) =>
      handlers.wait(
        request.caller,
        reply,
        "stateful",
        request.params.run_id,
        request.params.thread_id,
      ),
  );

  app.post(
    "/threads/:thread_id/runs/:run_id/cancel",
    {
      schema: {
        params: threadRunParams,
        querystring: cancelQuery,
        response: { 204: { type: "null" }, 404: error, 422: error },
      },
    },
    async (request, reply) => {
      const { action = "interrupt", wait = false } = request.query;
      await runs.cancel(
        request.caller,
        request.params.run_id,
        "stateful",
        { action, wait },
        request.params.thread_id,
      );
      return reply.code(204).send(null);
    },
  );
};

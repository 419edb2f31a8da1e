import type { FastifyPluginAsyncJsonSchemaToTs } from "@fastify/type-provider-json-schema-to-ts";
import { toAcpRun } from "../../engine/acp-mapping.js";
import { acpSchemas } from "../../validation/index.js";
import { cancelQuery, runIdParams } from "../params.js";
import { RunHandlers } from "./run-handlers.js";

const error = acpSchemas.ErrorResponse;
const sse = { 200: acpSchemas.RunOutputStream, 404: error, 409: error, 422: error } as const;

/** ACP "Stateless Runs" tag: runs on a hidden thread of their own. */
export const statelessRunRoutes: FastifyPluginAsyncJsonSchemaToTs = async (app) => {
  const { runs, settings } = app.deps;
  const handlers = new RunHandlers(runs, settings.keepAliveSeconds);

  app.post(
    "/runs",
    {
      schema: {
        body: acpSchemas.RunCreateStateless,
        response: { 200: acpSchemas.RunStateless, 404: error, 409: error, 422: error },
      },
    },
    async (request) => handlers.create(request.caller, "stateless", request.body),
  );

  app.post(
    "/runs/search",
    {
      schema: {
        body: acpSchemas.RunSearchRequest,
        response: { 200: acpSchemas.RunStatelessList, 422: error },
      },
    },
    async (request) => {
      const { agent_id, status, metadata, limit, offset } = request.body;
      const found = await runs.search(request.caller, {
        agent_id,
        status,
        metadata: metadata as Record<string, unknown> | undefined,
        kind: "stateless",
        limit,
        offset,
      });
      return found.map(toAcpRun);
    },
  );

  app.post(
    "/runs/stream",
    {
      schema: { body: acpSchemas.RunCreateStateless, response: sse },
      config: { longRequest: "stream" },
    },
    async (request, reply) => handlers.createAndStream(request, reply, "stateless", request.body),
  );

  app.post(
    "/runs/wait",
    {
      schema: {
        body: acpSchemas.RunCreateStateless,
        response: { 200: acpSchemas.RunWaitResponseStateless, 404: error, 409: error, 422: error },
      },
      config: { longRequest: "wait" },
    },
    async (request, reply) =>
      handlers.createAndWait(request.caller, reply, "stateless", request.body),
  );

  app.get(
    "/runs/:run_id",
    {
      schema: {
        params: runIdParams,
        response: { 200: acpSchemas.RunStateless, 404: error, 422: error },
      },
    },
    async (request) => toAcpRun(await runs.get(request.caller, request.params.run_id, "stateless")),
  );

  app.post(
    "/runs/:run_id",
    {
      schema: {
        params: runIdParams,
        body: acpSchemas.ResumePayloadSchema,
        response: { 200: acpSchemas.RunStateless, 404: error, 409: error, 422: error },
      },
    },
    async (request) =>
      toAcpRun(await runs.resume(request.caller, request.params.run_id, "stateless", request.body)),
  );

  app.delete(
    "/runs/:run_id",
    {
      schema: {
        params: runIdParams,
        response: { 204: { type: "null" }, 404: error, 409: error, 422: error },
      },
    },
    async (request, reply) => {
      await runs.delete(request.caller, request.params.run_id, "stateless");
      return reply.code(204).send(null);
    },
  );

  app.get(
    "/runs/:run_id/stream",
    { schema: { params: runIdParams, response: sse }, config: { longRequest: "stream" } },
    async (request, reply) => handlers.join(request, reply, "stateless", request.params.run_id),
  );

  app.get(
    "/runs/:run_id/wait",
    {
      schema: {
        params: runIdParams,
        response: { 200: acpSchemas.RunWaitResponseStateless, 404: error, 422: error },
      },
      config: { longRequest: "wait" },
    },
    async (request, reply) =>
      handlers.wait(request.caller, reply, "stateless", request.params.run_id),
  );

  app.post(
    "/runs/:run_id/cancel",
    {
      schema: {
        params: runIdParams,
        querystring: cancelQuery,
        response: { 204: { type: "null" }, 404: error, 422: error },
      },
    },
    async (request, reply) => {
      const { action = "interrupt", wait = false } = request.query;
      await runs.cancel(request.caller, request.params.run_id, "stateless", { action, wait });
      return reply.code(204).send(null);
    },
  );
};

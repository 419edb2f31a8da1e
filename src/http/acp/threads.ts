import type { FastifyPluginAsyncJsonSchemaToTs } from "@fastify/type-provider-json-schema-to-ts";
import { toAcpThread, toAcpThreadState } from "../../engine/acp-mapping.js";
import type { AcpMessage } from "../../storage/types.js";
import { acpSchemas } from "../../validation/index.js";
import { historyQuery, threadIdParams } from "../params.js";

const e404 = acpSchemas.ErrorResponse;
const e409 = acpSchemas.ErrorResponse;
const e422 = acpSchemas.ErrorResponse;

/** ACP "Threads" tag. HTTP only: parse, call the thread service, reply. */
export const threadRoutes: FastifyPluginAsyncJsonSchemaToTs = async (app) => {
  const { threads } = app.deps;

  app.post(
    "/threads",
    {
      schema: {
        body: acpSchemas.ThreadCreate,
        response: { 200: acpSchemas.Thread, 409: e409, 422: e422 },
      },
    },
    async (request) => toAcpThread(await threads.create(request.caller, request.body)),
  );

  app.post(
    "/threads/search",
    {
      schema: {
        body: acpSchemas.ThreadSearchRequest,
        response: { 200: acpSchemas.ThreadList, 422: e422 },
      },
    },
    async (request) => {
      const { metadata, values, status, limit, offset } = request.body;
      const found = await threads.search(request.caller, {
        metadata: metadata as Record<string, unknown> | undefined,
        values: values as Record<string, unknown> | undefined,
        status,
        limit,
        offset,
      });
      return found.map(toAcpThread);
    },
  );

  app.get(
    "/threads/:thread_id",
    {
      schema: {
        params: threadIdParams,
        response: { 200: acpSchemas.Thread, 404: e404, 422: e422 },
      },
    },
    async (request) => toAcpThread(await threads.get(request.caller, request.params.thread_id)),
  );

  app.patch(
    "/threads/:thread_id",
    {
      schema: {
        params: threadIdParams,
        body: acpSchemas.ThreadPatch,
        response: { 200: acpSchemas.Thread, 404: e404, 409: e409, 422: e422 },
      },
    },
    async (request) => {
      const { metadata, values, messages, checkpoint } = request.body;
      const thread = await threads.patch(request.caller, request.params.thread_id, {
        metadata: metadata as Record<string, unknown> | undefined,
        values: values as Record<string, unknown> | undefined,
        messages: messages as AcpMessage[] | undefined,
        checkpoint,
      });
      return toAcpThread(thread);
    },
  );

  app.delete(
    "/threads/:thread_id",
    {
      schema: {
        params: threadIdParams,
        response: { 204: { type: "null" }, 404: e404, 409: e409, 422: e422 },
      },
    },
    async (request, reply) => {
      await threads.delete(request.caller, request.params.thread_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    "/threads/:thread_id/copy",
    {
      schema: {
        params: threadIdParams,
        response: { 200: acpSchemas.Thread, 404: e404, 422: e422 },
      },
    },
    async (request) => toAcpThread(await threads.copy(request.caller, request.params.thread_id)),
  );

  app.get(
    "/threads/:thread_id/history",
    {
      schema: {
        params: threadIdParams,
        querystring: historyQuery,
        response: { 200: acpSchemas.ThreadStateList, 404: e404, 422: e422 },
      },
    },
    async (request) => {
      const { limit = 10, before } = request.query;
      const checkpoints = await threads.history(request.caller, request.params.thread_id, {
        limit,
        before,
      });
      return checkpoints.map(toAcpThreadState);
    },
  );
};

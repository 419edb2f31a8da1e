import type { FastifyError, FastifyInstance, FastifyReply } from "fastify";
import { isDomainError } from "../../util/errors.js";
import { domainErrorStatus } from "../errors.js";

/** LangGraph's error body: `{"detail": "…"}`, which its client puts in the error it throws. */
export function sendDetail(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply
    .code(status)
    .type("application/json; charset=utf-8")
    .send(JSON.stringify({ detail: message }));
}

/**
 * The face's errors in LangGraph's shape: a refused request gets its 4xx with `detail` naming
 * the problem; anything else goes on to the app's handler (a logged 500).
 */
export function answerErrorsAsLangGraph(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, _request, reply) => {
    if (isDomainError(err)) {
      if (err.code === "overloaded") reply.header("retry-after", "1");
      return sendDetail(reply, domainErrorStatus(err.code), err.message);
    }
    if (err.validation) return sendDetail(reply, 422, err.message);
    const status = err.statusCode;
    if (typeof status === "number" && status >= 400 && status < 500) {
      return sendDetail(reply, status, err.message);
    }
    throw err;
  });
}

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { RPC } from "./tool-calls.js";

type Handler = (request: unknown, extra: unknown) => Promise<unknown>;

/** A schema validation error of the SDK (zod): the request's params are not the method's. */
const isSchemaError = (
  err: unknown,
): err is Error & { issues: Array<{ path?: unknown[]; message?: string }> } =>
  err instanceof Error && Array.isArray((err as { issues?: unknown }).issues);

/**
 * The SDK checks a request's params against the method's schema before the handler runs, and
 * a request that fails the check is answered as an internal error (-32603), though the client
 * sent it wrong. Every handler of the server is wrapped so that such a request is InvalidParams
 * (-32602) naming the first problem, as JSON-RPC says. The SDK keeps its handlers in
 * `_requestHandlers` (its version is pinned exactly in package.json); if that ever changes,
 * nothing is wrapped and the SDK's own answer stands.
 */
export function answerBadParamsAsInvalidParams(server: Server): void {
  const handlers = (server as unknown as { _requestHandlers?: Map<string, Handler> })
    ._requestHandlers;
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      try {
        return await handler(request, extra);
      } catch (err) {
        if (!isSchemaError(err)) throw err;
        const issue = err.issues[0];
        const where = issue?.path?.length ? issue.path.join(".") : "params";
        throw new McpError(
          RPC.invalidParams,
          `invalid ${method} request: ${where}: ${issue?.message ?? "does not match the method's schema"}`,
        );
      }
    });
  }
}

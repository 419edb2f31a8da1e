import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/** Requests a person at a terminal does not want a line for: probes, metrics, the inspector's files. */
function isQuiet(url: string, inspectorPath: string | null): boolean {
  const path = url.split("?", 1)[0]!;
  if (path === "/healthz" || path === "/readyz" || path === "/metrics") return true;
  if (inspectorPath === null || !path.startsWith(inspectorPath)) return false;
  // The inspector's data API is worth a line; its page and assets are not.
  return !path.startsWith(`${inspectorPath}/api/`);
}

/**
 * One log line per request, for a person reading a terminal: `POST /runs/wait 200 4 ms`, in
 * place of Fastify's two lines with their request and response objects (the app turns those
 * off). Probes, metrics and the inspector's files are logged at debug.
 */
export function logEachRequest(app: FastifyInstance, inspectorPath: string | null): void {
  app.addHook("onResponse", (request: FastifyRequest, reply: FastifyReply, done) => {
    const ms = Math.round(reply.elapsedTime);
    const line = `${request.method} ${request.url} ${reply.statusCode} ${ms} ms`;
    if (isQuiet(request.url, inspectorPath)) request.log.debug(line);
    else request.log.info(line);
    done();
  });
}

import type { FastifyRequest } from "fastify";
import { A2aError } from "../../bridge/a2a/index.js";

export type A2aDialect = "1.0" | "0.3";

/**
 * The A2A version a request asks for: the `A2A-Version` header (or query parameter). A request
 * that names none is 0.3, as the specification says; a version this server does not speak is
 * VersionNotSupported. JSON-RPC method names tell the two dialects apart on their own too
 * (`SendMessage` against `message/send`), and the binding serves whichever the method is.
 */
export function requestedVersion(request: FastifyRequest): A2aDialect {
  const header = request.headers["a2a-version"];
  const query = (request.query as Record<string, unknown> | undefined)?.["A2A-Version"];
  const raw =
    (Array.isArray(header) ? header[0] : header) ?? (typeof query === "string" ? query : undefined);
  if (raw === undefined || raw.trim() === "") return "0.3";
  const version = raw.trim();
  if (/^1\.0(\.\d+)?$/.test(version) || version === "1") return "1.0";
  if (/^0\.3(\.\d+)?$/.test(version)) return "0.3";
  throw new A2aError(
    "VersionNotSupported",
    `A2A-Version ${JSON.stringify(version.slice(0, 40))} is not supported: this agent speaks 1.0 and 0.3`,
  );
}

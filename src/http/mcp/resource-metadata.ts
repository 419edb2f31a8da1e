import type { FastifyInstance, FastifyRequest } from "fastify";

/** Where RFC 9728 puts a protected resource's metadata: this prefix, then the resource's path. */
export const METADATA_PREFIX = "/.well-known/oauth-protected-resource";

/** The metadata paths of the MCP endpoints (every agent's, and each agent's own). */
export function resourceMetadataPaths(basePath: string, agentNames: readonly string[]): string[] {
  return [basePath, ...agentNames.map((name) => `${basePath}/${name}`)].map(
    (path) => `${METADATA_PREFIX}${path}`,
  );
}

/** The `WWW-Authenticate` challenge of a 401 under the MCP base path (MCP Authorization). */
export function challengeOf(request: FastifyRequest, basePath: string): string {
  const path = request.url.split("?")[0]!;
  const resource = path.startsWith(`${basePath}/`) || path === basePath ? path : basePath;
  const origin = `${request.protocol}://${request.host}`;
  return `Bearer resource_metadata="${origin}${METADATA_PREFIX}${resource}"`;
}

/**
 * OAuth protected-resource metadata (RFC 9728) for each MCP endpoint, when users' tokens are
 * accepted: the authorization server is the configured token issuer, so an MCP host that
 * signs its user in there (MCP 2025-11-25, Authorization) learns where from the 401's
 * challenge.
 */
export function registerResourceMetadata(
  app: FastifyInstance,
  basePath: string,
  agentNames: readonly string[],
  issuer: string,
): void {
  for (const path of resourceMetadataPaths(basePath, agentNames)) {
    app.get(path, async (request, reply) => {
      const origin = `${request.protocol}://${request.host}`;
      reply.header("cache-control", "public, max-age=300");
      return {
        resource: `${origin}${path.slice(METADATA_PREFIX.length)}`,
        authorization_servers: [issuer],
        bearer_methods_supported: ["header"],
        resource_name: "acp-agui agents (MCP)",
      };
    });
  }
}

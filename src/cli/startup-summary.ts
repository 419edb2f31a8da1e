import { servedFaces } from "../config/settings.js";
import type { RunningServer } from "../server.js";
import { redactStorageUrl } from "../storage/redact-url.js";

/**
 * What the one start-up line says: where the server listens, the agents it serves, each face
 * that is on and its path, the inspector's address, the database, and the replica's name in run
 * leases (operators and tests match it to a process).
 */
export function startupSummary(server: RunningServer): Record<string, unknown> {
  const { settings, url, app } = server;
  return {
    url,
    agents: app.deps.registry
      .list()
      .map((agent) => agent.name)
      .join(", "),
    faces: servedFaces(settings)
      .map(({ face, path }) => `${face} ${path}`)
      .join(", "),
    ...(settings.inspector.enabled ? { inspector: `${url}${settings.inspector.path}` } : {}),
    database: redactStorageUrl(settings.database),
    replica: app.deps.engine.owner,
  };
}

import type { RunningServer } from "../server.js";
import { redactStorageUrl } from "../storage/redact-url.js";

/**
 * What the one start-up line says: where the server listens, the agents it serves, each face
 * that is on and its path, the inspector's address, the database, and the replica's name in run
 * leases (operators and tests match it to a process).
 */
export function startupSummary(server: RunningServer): Record<string, unknown> {
  const { settings, url, app } = server;
  const faces: string[] = [];
  if (settings.acp.enabled) faces.push("ACP /");
  if (settings.agui.enabled) faces.push("AG-UI /ag-ui/{agent}");
  if (settings.copilotkit.enabled) faces.push(`CopilotKit ${settings.copilotkit.basePath}`);
  if (settings.a2a.enabled) faces.push(`A2A ${settings.a2a.basePath}/{agent}`);
  return {
    url,
    agents: app.deps.registry
      .list()
      .map((agent) => agent.name)
      .join(", "),
    faces: faces.join(", "),
    ...(settings.inspector.enabled ? { inspector: `${url}${settings.inspector.path}` } : {}),
    database: redactStorageUrl(settings.database),
    replica: app.deps.engine.owner,
  };
}

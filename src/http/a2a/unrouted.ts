import { A2aError } from "../../bridge/a2a/index.js";

/**
 * Requests under the face's prefix that name no operation, answered in the shape of the binding
 * the path belongs to rather than as a bare "no route": a path of an operation asked with
 * another verb is 405 with `Allow` naming the verbs it takes; any other path is 404, saying
 * where an agent's interface and card are.
 */

export interface Unrouted {
  error: A2aError;
  /** The path is the JSON-RPC binding's (the agent's interface URL itself): a JSON-RPC error. */
  jsonRpc: boolean;
  /** For a 405: the verbs the path takes. */
  allow?: string;
}

const GET = "GET, HEAD";
const CARDS = new Set(["agent-card.json", "agent.json"]);

/** Where cards are, for a client that looked elsewhere. */
export const cardHint = (basePath: string) =>
  `an agent's card is at ${basePath}/{agent}/.well-known/agent-card.json (A2A 0.3: .well-known/agent.json), its interface at ${basePath}/{agent}; with the official JS SDK, createFromUrl("<origin>${basePath}/{agent}/")`;

/** The verbs an HTTP+JSON path (segments after the agent's) takes; undefined for none. */
function restVerbs(rest: readonly string[]): string | undefined {
  const [first, second, third, fourth, ...more] = rest;
  if (more.length > 0) return undefined;
  if (rest.length === 1 && (first === "message:send" || first === "message:stream")) return "POST";
  if (rest.length === 1 && first === "extendedAgentCard") return GET;
  if (rest.length === 2 && first === ".well-known" && CARDS.has(second!)) return GET;
  if (first !== "tasks") return undefined;
  if (rest.length === 1) return GET;
  if (second === undefined || second === "") return undefined;
  if (rest.length === 2) {
    const action = second.includes(":") ? second.slice(second.indexOf(":") + 1) : undefined;
    if (action === undefined) return GET;
    if (action === "cancel") return "POST";
    if (action === "subscribe") return "GET, HEAD, POST";
    return undefined;
  }
  if (third !== "pushNotificationConfigs") return undefined;
  if (rest.length === 3) return "GET, HEAD, POST";
  return fourth ? "GET, HEAD, DELETE" : undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The refusal of `method` on `url` (as the client sent it), under `basePath`. `agentExists`
 * tells whether the path's first segment names an agent: a path of an unknown agent is
 * AgentNotFound, as on the operations themselves.
 */
export function unrouted(
  basePath: string,
  method: string,
  url: string,
  agentExists: (ref: string) => boolean,
): Unrouted {
  const path = url.split("?")[0]!;
  const where = `${method} ${path.slice(0, 200)}`;
  const segments = path.slice(basePath.length).split("/").slice(1).map(decode);
  const [agent, ...rest] = segments;
  if (agent === undefined || agent === "" || agent === ".well-known") {
    return { error: new A2aError("NotFound", `${where}: ${cardHint(basePath)}`), jsonRpc: false };
  }
  // The interface URL itself, with or without a trailing slash: the JSON-RPC binding.
  const jsonRpc = rest.length === 0 || (rest.length === 1 && rest[0] === "");
  const allow = jsonRpc ? "POST" : restVerbs(rest);
  if (!agentExists(agent)) {
    const message = `agent ${JSON.stringify(agent.slice(0, 300))} not found: ${cardHint(basePath)}`;
    return { error: new A2aError("AgentNotFound", message), jsonRpc };
  }
  if (allow === undefined) {
    const message = `${where} is not an A2A operation: the interface is POST ${basePath}/${agent} (JSON-RPC) and the HTTP+JSON paths beneath it (message:send, message:stream, tasks, tasks/{id}, tasks/{id}:cancel, tasks/{id}:subscribe, tasks/{id}/pushNotificationConfigs, extendedAgentCard)`;
    return { error: new A2aError("NotFound", message), jsonRpc: false };
  }
  const message = `${where} is not allowed: this path takes ${allow}`;
  return { error: new A2aError("MethodNotAllowed", message), jsonRpc, allow };
}

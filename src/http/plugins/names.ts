/**
 * The names the app's Fastify plugins register under (the fastify-plugin convention). A plugin
 * lists the names it depends on; Fastify refuses to start when one of them was not registered
 * before it, so the order in app.ts is checked rather than remembered.
 */
export const PLUGIN = {
  /** JSON body parsing, the validator compiler, ACP string errors. */
  httpConventions: "acp-http-conventions",
  /** The 503 gate once shutdown begins, and the shutdown sequence itself. */
  shutdown: "acp-shutdown",
  cors: "acp-cors",
  /** Sets `request.caller`; refuses keys restricted to other agents. */
  auth: "acp-auth",
  rateLimit: "acp-rate-limit",
  /** Counts streams (bounded by maxOpenStreams) and waits; ends them at shutdown. */
  longRequests: "acp-long-requests",
  pagingBounds: "acp-paging-bounds",
  metrics: "acp-metrics",
  /** Health, readiness and the bundled protocol documents, whichever faces are on. */
  meta: "acp-meta",
  /** The ACP face: agents, threads, thread runs, stateless runs. */
  acpRoutes: "acp-routes",
  aguiFace: "acp-agui-face",
  inspector: "acp-inspector",
  copilotkit: "acp-copilotkit",
  /** Every agent as an A2A agent (see docs/a2a.md). */
  a2aFace: "acp-a2a-face",
  /** LangGraph's API: agents as assistants (see docs/langgraph.md). */
  langgraphFace: "acp-langgraph-face",
  /** Every agent as an MCP tool (see docs/mcp.md). */
  mcpFace: "acp-mcp-face",
} as const;

/** What every route group needs before it: who is calling, limits, long-request accounting. */
export const ROUTE_PREREQUISITES = [
  PLUGIN.httpConventions,
  PLUGIN.shutdown,
  PLUGIN.auth,
  PLUGIN.rateLimit,
  PLUGIN.longRequests,
  PLUGIN.pagingBounds,
];

import type { FastifyPluginAsyncJsonSchemaToTs } from "@fastify/type-provider-json-schema-to-ts";
import { ERRCODE } from "../../bridge/acp/outcomes.js";
import { toAcpRun } from "../../engine/acp-mapping.js";
import type { Metrics } from "../../metrics/metrics.js";
import type { RunRecord, RunSearch, RunStatus } from "../../storage/types.js";
import { packageVersion } from "../../util/paths.js";
import { runIdParams } from "../params.js";
import { metricsRefusal } from "../plugins/metrics.js";

/**
 * What the inspector needs beyond the ACP API, read-only and behind the same API keys: the
 * server's health with its queue and run counts (from the metrics registry, as JSON), every
 * stored frame of a run whatever its stream mode (for replay), recent runs of both kinds
 * (ACP's run search lists stateless runs only) with the face each came through, and the last
 * run of each of some threads (which agent a thread talks to).
 */
export interface InspectorApiOptions {
  metrics?: Metrics;
}

const frameQuery = {
  type: "object",
  properties: {
    after_seq: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
    limit: { type: "integer", minimum: 1, maximum: 1000, default: 1000 },
  },
  additionalProperties: false,
} as const;

const runsQuery = {
  type: "object",
  properties: {
    agent_id: { type: "string", format: "uuid" },
    thread_id: { type: "string", format: "uuid" },
    // ACP's statuses, with `cancelled` apart from `error` (a cancelled run is ACP `error` 499).
    status: {
      type: "string",
      enum: ["pending", "error", "cancelled", "success", "timeout", "interrupted"],
    },
    limit: { type: "integer", minimum: 1, maximum: 100, default: 25 },
    offset: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
  },
  additionalProperties: false,
} as const;

/** Thread ids, comma-separated: at most a page of the thread list. */
const MAX_THREADS = 100;
const lastRunsQuery = {
  type: "object",
  required: ["thread_ids"],
  properties: {
    thread_ids: {
      type: "string",
      pattern: `^[0-9a-fA-F-]{36}(,[0-9a-fA-F-]{36}){0,${MAX_THREADS - 1}}$`,
    },
  },
  additionalProperties: false,
} as const;

export const inspectorApi: FastifyPluginAsyncJsonSchemaToTs<{
  Options: InspectorApiOptions;
}> = async (app, options) => {
  const { ops, runs, settings } = app.deps;
  const startedAt = new Date();

  app.get("/overview", async (request) => {
    const ready = await ops.ready();
    return {
      server: {
        version: packageVersion(),
        storage: ops.storageKind,
        ready,
        // What a caller must present: the page asks for a key only when one is needed.
        auth: {
          keys: settings.auth.keys.length > 0,
          tokens: settings.auth.jwt !== undefined,
        },
        started_at: startedAt.toISOString(),
        uptime_seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
      },
      metrics: options.metrics
        ? metricsRefusal(request.caller)
          ? { enabled: true, available: false, reason: metricsRefusal(request.caller) }
          : { enabled: true, available: true, ...(await summarize(options.metrics)) }
        : { enabled: false, available: false, reason: "metrics are off (server.metrics.enabled)" },
    };
  });

  app.get("/runs", { schema: { querystring: runsQuery } }, async (request) => {
    const { agent_id, thread_id, status, limit, offset } = request.query;
    // The caller's own runs of the agents it may use, of both kinds, filtered in the query
    // (full pages).
    const found = await runs.search(request.caller, {
      agent_id,
      thread_id,
      ...statusFilter(status),
      limit,
      offset,
    });
    return found.map(listedRun);
  });

  app.get("/threads/last-runs", { schema: { querystring: lastRunsQuery } }, async (request) => {
    // The newest run of each thread the caller reaches (none: null), in one answer for a page
    // of the thread list rather than a request per thread.
    const ids = [...new Set(request.query.thread_ids.toLowerCase().split(","))];
    const last = await Promise.all(
      ids.map((thread_id) =>
        runs.search(request.caller, { thread_id, kind: "stateful", limit: 1, offset: 0 }),
      ),
    );
    return Object.fromEntries(
      ids.map((id, i) => [id, last[i]![0] ? listedRun(last[i]![0]) : null]),
    );
  });

  app.get(
    "/runs/:run_id/frames",
    { schema: { params: runIdParams, querystring: frameQuery } },
    async (request, reply) => {
      const { after_seq, limit } = request.query;
      // Someone else's run does not exist for this caller (404, as on the ACP routes).
      const { run, frames } = await ops.runFrames(
        request.caller,
        request.params.run_id,
        after_seq,
        limit,
      );
      // Frames are stored as JSON text: spliced in as they are, never parsed and re-serialized.
      const list = frames
        .map((f) => `{"seq":${f.seq},"mode":${JSON.stringify(f.mode)},"data":${f.data}}`)
        .join(",");
      return reply
        .type("application/json; charset=utf-8")
        .send(`{"run":${JSON.stringify(describeRun(run))},"frames":[${list}]}`);
    },
  );
};

/** A status as the inspector shows it, as a search: `cancelled` and `error` are told apart. */
function statusFilter(status: string | undefined): Partial<RunSearch> {
  if (status === undefined) return {};
  if (status === "cancelled" || status === "error") {
    return {
      status: "error",
      errcode: { value: ERRCODE.cancelled, is: status === "cancelled" },
    };
  }
  return { status: status as RunStatus };
}

/**
 * The ACP run, plus what only the server knows: its kind, segments (each resume's answers
 * with the segment it started), last frame, the face it came through (null for runs from
 * before faces were recorded) and its output.
 */
function describeRun(run: RunRecord) {
  return {
    ...toAcpRun(run),
    kind: run.kind,
    face: run.face,
    segments: run.segments,
    last_seq: run.last_seq,
    output: run.output,
  };
}

/**
 * A run in a list: its output only as far as a row shows it (its type, and an error's code and
 * description), not the values and messages a finished run's output repeats.
 */
function listedRun(run: RunRecord) {
  const { output } = run;
  const brief =
    output === null
      ? null
      : output.type === "error"
        ? { type: output.type, errcode: output.errcode, description: output.description }
        : { type: output.type };
  return { ...describeRun(run), output: brief };
}

type MetricJson = Awaited<ReturnType<Metrics["registry"]["getMetricsAsJSON"]>>[number];

interface AgentSummary {
  agent: string;
  pending: number;
  executing: number;
  created: number;
  stopped: Record<string, number>;
  events: number;
  events_rejected: number;
}

/** The server's own metrics, per agent: the same numbers `GET /metrics` exposes. */
async function summarize(metrics: Metrics) {
  const all = await metrics.registry.getMetricsAsJSON();
  const byName = new Map<string, MetricJson>(all.map((metric) => [metric.name, metric]));
  const agents = new Map<string, AgentSummary>();
  const agent = (name: string): AgentSummary => {
    let entry = agents.get(name);
    if (!entry) {
      entry = {
        agent: name,
        pending: 0,
        executing: 0,
        created: 0,
        stopped: {},
        events: 0,
        events_rejected: 0,
      };
      agents.set(name, entry);
    }
    return entry;
  };
  const each = (
    name: string,
    visit: (entry: AgentSummary, value: number, status: string) => void,
  ) => {
    for (const sample of byName.get(name)?.values ?? []) {
      const labels = sample.labels as Record<string, string | number>;
      if (typeof labels.agent !== "string") continue;
      visit(agent(labels.agent), sample.value, String(labels.status ?? ""));
    }
  };
  each("acp_runs_pending", (entry, value) => (entry.pending = value));
  each("acp_runs_executing", (entry, value) => (entry.executing = value));
  each("acp_runs_created_total", (entry, value) => (entry.created += value));
  each("acp_runs_total", (entry, value, status) => {
    entry.stopped[status] = (entry.stopped[status] ?? 0) + value;
  });
  each("acp_agui_events_total", (entry, value) => (entry.events += value));
  each("acp_agui_events_rejected_total", (entry, value) => (entry.events_rejected += value));
  const single = (name: string) => byName.get(name)?.values[0]?.value ?? 0;
  const webhooks: Record<string, number> = {};
  for (const sample of byName.get("acp_webhook_deliveries_total")?.values ?? []) {
    webhooks[String(sample.labels.result)] = sample.value;
  }
  return {
    agents: [...agents.values()].sort((a, b) => a.agent.localeCompare(b.agent)),
    open_streams: single("acp_open_streams"),
    webhooks,
  };
}

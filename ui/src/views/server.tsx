import { useEffect, useState } from "preact/hooks";
import { ErrorNote, Section, StatusBadge } from "../components/common";
import { api, inspectorApi } from "../lib/api";
import { formatDuration } from "../lib/format";
import type { Overview } from "../lib/types";
import { useLoad } from "../lib/use-load";

/** The server's health and, from its metrics, each agent's queue and run counts. */
export function ServerView() {
  const overview = useLoad(() => api<Overview>(inspectorApi("/overview")), []);
  const health = useLoad(() => probe("/healthz"), []);
  const ready = useLoad(() => probe("/readyz"), []);
  const [auto, setAuto] = useState(true);
  useEffect(() => {
    if (!auto) return;
    const timer = setInterval(() => {
      overview.reload();
      health.reload();
      ready.reload();
    }, 2000);
    return () => clearInterval(timer);
  }, [auto, overview.reload, health.reload, ready.reload]);
  const o = overview.data;
  return (
    <div class="page">
      <header class="page-head">
        <h1>Server</h1>
        <label class="check">
          <input
            type="checkbox"
            checked={auto}
            onChange={(e) => setAuto(e.currentTarget.checked)}
          />
          <span>refresh every 2 s</span>
        </label>
      </header>
      <ErrorNote error={overview.error} />
      <dl class="facts big">
        <div>
          <dt>GET /healthz</dt>
          <dd data-testid="healthz">{health.data ?? (health.error ? "down" : "…")}</dd>
        </div>
        <div>
          <dt>GET /readyz</dt>
          <dd data-testid="readyz">{ready.data ?? (ready.error ? "not ready" : "…")}</dd>
        </div>
        {o && (
          <>
            <div>
              <dt>version</dt>
              <dd>{o.server.version}</dd>
            </div>
            <div>
              <dt>storage</dt>
              <dd>{o.server.storage}</dd>
            </div>
            <div>
              <dt>up for</dt>
              <dd>{formatDuration(o.server.uptime_seconds * 1000)}</dd>
            </div>
            <div>
              <dt>API keys</dt>
              <dd data-testid="api-keys">{o.server.auth.keys ? "required" : "off"}</dd>
            </div>
            {o.server.auth.tokens && (
              <div>
                <dt>user tokens</dt>
                <dd>accepted</dd>
              </div>
            )}
          </>
        )}
      </dl>
      {o && <Metrics overview={o} />}
    </div>
  );
}

async function probe(path: string): Promise<string> {
  const response = await fetch(path);
  const body = await response.json().catch(() => response.statusText);
  return typeof body === "string" ? body : String(response.status);
}

function Metrics({ overview }: { overview: Overview }) {
  const metrics = overview.metrics;
  if (!metrics.available) {
    return (
      <Section title="Metrics">
        <div class="note" data-testid="metrics-off">
          {metrics.enabled
            ? metrics.reason
            : "Metrics are disabled on this server (server.metrics.enabled: false)."}
        </div>
      </Section>
    );
  }
  const statuses = ["success", "error", "timeout", "interrupted"];
  return (
    <Section
      title="Agents"
      actions={
        <span class="muted small">
          from GET /metrics · open streams {metrics.open_streams} · webhooks{" "}
          {Object.entries(metrics.webhooks)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ") || "none"}
        </span>
      }
    >
      <table class="table" data-testid="agent-metrics">
        <thead>
          <tr>
            <th>agent</th>
            <th title="acp_runs_executing: runs executing on this server">running</th>
            <th title="acp_runs_pending minus running here: queued or executing elsewhere">
              queued
            </th>
            <th title="acp_runs_created_total">created</th>
            {statuses.map((s) => (
              <th key={s}>
                <StatusBadge status={s} />
              </th>
            ))}
            <th title="acp_agui_events_total">AG-UI events</th>
            <th title="acp_agui_events_rejected_total">rejected</th>
          </tr>
        </thead>
        <tbody>
          {metrics.agents.map((a) => (
            <tr key={a.agent} data-agent={a.agent}>
              <td>{a.agent}</td>
              <td class="num">{a.executing}</td>
              <td class="num">{Math.max(0, a.pending - a.executing)}</td>
              <td class="num">{a.created}</td>
              {statuses.map((s) => (
                <td key={s} class="num">
                  {a.stopped[s] ?? 0}
                </td>
              ))}
              <td class="num">{a.events}</td>
              <td class="num">{a.events_rejected}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

import { useState } from "preact/hooks";
import { Empty, ErrorNote } from "../components/common";
import { listAgents } from "../lib/agents";
import { api, inspectorApi } from "../lib/api";
import type { RunInfo } from "../lib/types";
import { useLoad } from "../lib/use-load";
import { Pager, RunTable } from "./run-table";

const PAGE = 25;
const STATUSES = ["pending", "success", "interrupted", "cancelled", "timeout", "error"];

/** Recent runs of every kind, newest first, by agent and status. */
export function RunsView() {
  const [agent, setAgent] = useState("");
  const [status, setStatus] = useState("");
  const [offset, setOffset] = useState(0);
  const agents = useLoad(listAgents, []);
  const query = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
  if (agent) query.set("agent_id", agent);
  if (status) query.set("status", status);
  const runs = useLoad(() => api<RunInfo[]>(inspectorApi(`/runs?${query}`)), [query.toString()]);
  return (
    <div class="page">
      <header class="page-head">
        <h1>Runs</h1>
        <div class="row">
          <select
            class="input"
            aria-label="agent"
            value={agent}
            onChange={(e) => {
              setOffset(0);
              setAgent(e.currentTarget.value);
            }}
          >
            <option value="">every agent</option>
            {(agents.data ?? []).map((a) => (
              <option key={a.agent_id} value={a.agent_id}>
                {a.metadata.ref.name}
              </option>
            ))}
          </select>
          <select
            class="input"
            aria-label="status"
            value={status}
            onChange={(e) => {
              setOffset(0);
              setStatus(e.currentTarget.value);
            }}
          >
            <option value="">any status</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
          <button type="button" class="button ghost" onClick={runs.reload}>
            Refresh
          </button>
        </div>
      </header>
      <ErrorNote error={runs.error} />
      <section class="card">
        <RunTable runs={runs.data ?? []} />
        {runs.data && runs.data.length === 0 && (
          <Empty>
            {agent || status ? "No runs match." : "No runs yet. Start one from an agent's page."}
          </Empty>
        )}
        <Pager offset={offset} count={runs.data?.length ?? 0} page={PAGE} onChange={setOffset} />
      </section>
    </div>
  );
}

import { useState } from "preact/hooks";
import { CopyButton, Empty, ErrorNote, StatusBadge, Tabs } from "../components/common";
import { JsonView } from "../components/json-view";
import { listAgents } from "../lib/agents";
import { api, inspectorApi } from "../lib/api";
import { toCurl } from "../lib/curl";
import { formatTime } from "../lib/format";
import { shortId } from "../lib/ids";
import { href, navigate } from "../lib/router";
import type { AcpThread, RunInfo } from "../lib/types";
import { useLoad } from "../lib/use-load";
import { Conversation } from "./conversation";
import { AgentLabel, Pager, RunTable } from "./run-table";
import { History } from "./thread-history";

const PAGE = 25;

type ThreadTab = "conversation" | "values" | "history" | "runs";

export function ThreadDetail({ threadId }: { threadId: string }) {
  const thread = useLoad(() => api<AcpThread>(`/threads/${threadId}`), [threadId]);
  const [tab, setTab] = useState<ThreadTab>("conversation");
  const [error, setError] = useState<string | null>(null);
  const t = thread.data;
  // The agent the thread talks to: its last run's (none before its first run).
  const last = useLoad(
    () =>
      api<Record<string, RunInfo | null>>(
        inspectorApi(`/threads/last-runs?thread_ids=${threadId}`),
      ),
    [threadId],
  );
  const lastRun = last.data?.[threadId.toLowerCase()] ?? null;

  const copy = async () => {
    try {
      const copied = await api<AcpThread>(`/threads/${threadId}/copy`, { method: "POST" });
      navigate(`/threads/${copied.thread_id}`);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const remove = async () => {
    if (!confirm("Delete this thread, its history and its runs?")) return;
    try {
      await api(`/threads/${threadId}`, { method: "DELETE" });
      navigate("/threads");
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <div class="page">
      <header class="page-head">
        <div>
          <div class="crumbs">
            <a href={href("/threads")}>threads</a> / thread
          </div>
          <h1>
            Thread <span class="mono">{shortId(threadId)}</span>{" "}
            {t && <StatusBadge status={t.status} />}
          </h1>
          <div class="muted small mono">thread_id {threadId}</div>
        </div>
        <div class="actions">
          {last.data && <NextTurn threadId={threadId} agentId={lastRun?.agent_id} />}
          <button type="button" class="button" onClick={copy} title="POST /threads/{id}/copy">
            Copy
          </button>
          <button type="button" class="button danger" onClick={remove}>
            Delete
          </button>
          <button type="button" class="button ghost" onClick={thread.reload}>
            Refresh
          </button>
        </div>
      </header>
      <ErrorNote error={thread.error ?? error} />
      {t && (
        <dl class="facts">
          <div>
            <dt>created</dt>
            <dd>{formatTime(t.created_at)}</dd>
          </div>
          <div>
            <dt>updated</dt>
            <dd>{formatTime(t.updated_at)}</dd>
          </div>
          <div>
            <dt>agent</dt>
            <dd data-testid="thread-agent">
              {lastRun ? <AgentLabel agentId={lastRun.agent_id} /> : "—"}
            </dd>
          </div>
          <div>
            <dt>metadata</dt>
            <dd class="mono small">{JSON.stringify(t.metadata ?? {})}</dd>
          </div>
        </dl>
      )}
      {t && (
        <section class="card">
          <div class="card-body">
            <Tabs
              active={tab}
              onChange={setTab}
              tabs={[
                { id: "conversation", label: `Messages (${t.messages?.length ?? 0})` },
                { id: "values", label: "Values" },
                { id: "history", label: "History" },
                { id: "runs", label: "Runs" },
              ]}
            />
            <div class="tab-body">
              {tab === "conversation" && <Conversation messages={t.messages ?? []} />}
              {tab === "values" && <JsonView value={t.values ?? {}} open={3} />}
              {tab === "history" && <History threadId={threadId} />}
              {tab === "runs" && <ThreadRuns threadId={threadId} />}
            </div>
          </div>
        </section>
      )}
    </div>
  );
}

/**
 * Start the thread's next turn: the agent of its last run, or another one picked, then the
 * agent page's form runs on this thread.
 */
function NextTurn({ threadId, agentId }: { threadId: string; agentId?: string }) {
  const agents = useLoad(listAgents, []);
  const [agent, setAgent] = useState("");
  const list = agents.data ?? [];
  const usual = list.find((a) => a.agent_id === agentId)?.agent_id;
  const chosen = agent || usual || list[0]?.agent_id || "";
  return (
    <span class="row">
      <select
        class="input"
        aria-label="agent for the next turn"
        value={chosen}
        onChange={(e) => setAgent(e.currentTarget.value)}
      >
        {list.map((a) => (
          <option key={a.agent_id} value={a.agent_id}>
            {a.metadata.ref.name}
          </option>
        ))}
      </select>
      <button
        type="button"
        class="button primary"
        disabled={!chosen}
        onClick={() => navigate(`/agents/${chosen}`, { thread: threadId })}
      >
        Next turn
      </button>
    </span>
  );
}

function ThreadRuns({ threadId }: { threadId: string }) {
  const [offset, setOffset] = useState(0);
  const runs = useLoad(
    () =>
      api<RunInfo[]>(inspectorApi(`/runs?thread_id=${threadId}&limit=${PAGE}&offset=${offset}`)),
    [threadId, offset],
  );
  return (
    <div>
      <ErrorNote error={runs.error} />
      <RunTable runs={runs.data ?? []} />
      {runs.data && runs.data.length === 0 && <Empty>No runs on this thread yet.</Empty>}
      <Pager offset={offset} count={runs.data?.length ?? 0} page={PAGE} onChange={setOffset} />
      <div class="row end">
        <CopyButton
          text={toCurl({ method: "GET", path: `/threads/${threadId}/history?limit=10` })}
          label="Copy history as curl"
        />
      </div>
    </div>
  );
}

import { useState } from "preact/hooks";
import { CopyButton, Empty, ErrorNote, StatusBadge, Tabs } from "../components/common";
import { JsonView } from "../components/json-view";
import { JsonField } from "../components/schema-form";
import { agentName, listAgents } from "../lib/agents";
import { api } from "../lib/api";
import { toCurl } from "../lib/curl";
import { formatTime, shortId, uuidTime } from "../lib/format";
import { href, navigate, type Route } from "../lib/router";
import type { AcpRun, AcpThread, AcpThreadState } from "../lib/types";
import { useLoad } from "../lib/use-load";
import { Conversation } from "./conversation";

const STATUSES = ["idle", "busy", "interrupted", "error"];
const PAGE = 25;

/** Threads: search by metadata and status, and one thread's messages, values and history. */
export function ThreadsView({ threadId, route }: { threadId?: string; route: Route }) {
  if (threadId) return <ThreadDetail key={threadId} threadId={threadId} />;
  return <ThreadList route={route} />;
}

function ThreadList({ route }: { route: Route }) {
  const [metadata, setMetadata] = useState<unknown>(parseQuery(route.query.get("metadata")));
  const [status, setStatus] = useState(route.query.get("status") ?? "");
  const [offset, setOffset] = useState(0);
  const [search, setSearch] = useState({ metadata, status });
  const [valid, setValid] = useState(true);
  const body: Record<string, unknown> = { limit: PAGE, offset };
  if (search.metadata && typeof search.metadata === "object") body.metadata = search.metadata;
  if (search.status) body.status = search.status;
  const threads = useLoad(
    () => api<AcpThread[]>("/threads/search", { body }),
    [JSON.stringify(body)],
  );
  const [creating, setCreating] = useState<string | null>(null);

  const create = async () => {
    setCreating(null);
    try {
      const thread = await api<AcpThread>("/threads", {
        body: metadata && typeof metadata === "object" ? { metadata } : {},
      });
      navigate(`/threads/${thread.thread_id}`);
    } catch (e) {
      setCreating((e as Error).message);
    }
  };

  return (
    <div class="page">
      <header class="page-head">
        <h1>Threads</h1>
        <button
          type="button"
          class="button"
          onClick={create}
          title="A new thread with the metadata below"
        >
          New thread
        </button>
      </header>
      <form
        class="card filters"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setSearch({ metadata, status });
          navigate("/threads", {
            metadata: metadata === undefined ? undefined : JSON.stringify(metadata),
            status: status || undefined,
          });
        }}
      >
        <div class="card-body row wrap">
          <div class="form-field grow">
            <span class="form-label">
              metadata{" "}
              <span class="muted small">threads whose metadata holds these keys and values</span>
            </span>
            <JsonField
              value={metadata}
              onChange={setMetadata}
              onValid={setValid}
              name="metadata"
              rows={1}
              placeholder='{"user": "ana"}'
            />
          </div>
          <label class="form-field">
            <span class="form-label">status</span>
            <select
              class="input"
              name="status"
              value={status}
              onChange={(e) => setStatus(e.currentTarget.value)}
            >
              <option value="">any</option>
              {STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          <button type="submit" class="button primary" disabled={!valid}>
            Search
          </button>
        </div>
      </form>
      <ErrorNote error={threads.error ?? creating} />
      <section class="card">
        <table class="table">
          <thead>
            <tr>
              <th>thread</th>
              <th>status</th>
              <th>metadata</th>
              <th>last message</th>
              <th>updated</th>
            </tr>
          </thead>
          <tbody>
            {(threads.data ?? []).map((t) => (
              <tr
                key={t.thread_id}
                class="clickable"
                onClick={() => navigate(`/threads/${t.thread_id}`)}
              >
                <td>
                  <a class="mono" href={href(`/threads/${t.thread_id}`)}>
                    {shortId(t.thread_id)}
                  </a>
                </td>
                <td>
                  <StatusBadge status={t.status} />
                </td>
                <td class="mono small">
                  {Object.keys(t.metadata ?? {}).length ? JSON.stringify(t.metadata) : ""}
                </td>
                <td class="small preview">
                  <LastMessage thread={t} />
                </td>
                <td class="small">{formatTime(t.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {threads.data && threads.data.length === 0 && <Empty>No threads match.</Empty>}
        <Pager offset={offset} count={threads.data?.length ?? 0} page={PAGE} onChange={setOffset} />
      </section>
    </div>
  );
}

export function Pager(props: {
  offset: number;
  count: number;
  page: number;
  onChange(offset: number): void;
}) {
  const { offset, count, page, onChange } = props;
  if (offset === 0 && count < page) return null;
  return (
    <div class="pager">
      <button
        type="button"
        class="button small"
        disabled={offset === 0}
        onClick={() => onChange(Math.max(0, offset - page))}
      >
        ◂ Newer
      </button>
      <span class="small muted">
        {offset + 1}–{offset + count}
      </span>
      <button
        type="button"
        class="button small"
        disabled={count < page}
        onClick={() => onChange(offset + page)}
      >
        Older ▸
      </button>
    </div>
  );
}

function LastMessage({ thread }: { thread: AcpThread }) {
  const messages = thread.messages ?? [];
  const last = messages.at(-1);
  if (!last) return <span class="muted">none</span>;
  const text =
    typeof last.content === "string"
      ? last.content
      : last.content
          .filter((b) => b.type === "text")
          .map((b) => String(b.text ?? ""))
          .join("");
  return (
    <span>
      <span class="muted">
        {last.role} · {messages.length} ·{" "}
      </span>
      {text.length > 90 ? `${text.slice(0, 90)}…` : text || "(no text)"}
    </span>
  );
}

function parseQuery(text: string | null): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

type ThreadTab = "conversation" | "values" | "history" | "runs";

function ThreadDetail({ threadId }: { threadId: string }) {
  const thread = useLoad(() => api<AcpThread>(`/threads/${threadId}`), [threadId]);
  const [tab, setTab] = useState<ThreadTab>("conversation");
  const [error, setError] = useState<string | null>(null);
  const t = thread.data;

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
          <NextTurn threadId={threadId} />
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

/** Start the thread's next turn: pick an agent, then the agent page's form runs on this thread. */
function NextTurn({ threadId }: { threadId: string }) {
  const agents = useLoad(listAgents, []);
  const [agent, setAgent] = useState("");
  const list = agents.data ?? [];
  const chosen = agent || list[0]?.agent_id || "";
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

function History({ threadId }: { threadId: string }) {
  const [before, setBefore] = useState<string[]>([]);
  const cursor = before.at(-1);
  const history = useLoad(
    () =>
      api<AcpThreadState[]>(
        `/threads/${threadId}/history?limit=50${cursor ? `&before=${cursor}` : ""}`,
      ),
    [threadId, cursor],
  );
  const [picked, setPicked] = useState<string | null>(null);
  const list = history.data ?? [];
  const selected = list.find((c) => c.checkpoint.checkpoint_id === picked) ?? list[0];
  if (history.error) return <ErrorNote error={history.error} />;
  if (history.data && list.length === 0) return <Empty>No checkpoints yet.</Empty>;
  return (
    <div class="history">
      <div class="history-list" data-testid="history-list">
        <ul>
          {list.map((c) => {
            const meta = c.metadata ?? {};
            const id = c.checkpoint.checkpoint_id;
            return (
              <li key={id}>
                <button
                  type="button"
                  class={`history-item${selected?.checkpoint.checkpoint_id === id ? " active" : ""}`}
                  onClick={() => setPicked(id)}
                >
                  <span class="mono small">{shortId(id)}</span>
                  <span class="tag">{String(meta.source ?? "checkpoint")}</span>
                  {typeof meta.step === "string" && <span class="small">{meta.step}</span>}
                  <span class="muted small">{c.messages?.length ?? 0} messages</span>
                  <span class="muted small">{formatTime(uuidTime(id))}</span>
                </button>
              </li>
            );
          })}
        </ul>
        <div class="pager">
          <button
            type="button"
            class="button small"
            disabled={before.length === 0}
            onClick={() => setBefore(before.slice(0, -1))}
          >
            ◂ Newer
          </button>
          <button
            type="button"
            class="button small"
            disabled={list.length < 50}
            onClick={() => setBefore([...before, list.at(-1)!.checkpoint.checkpoint_id])}
          >
            Older ▸
          </button>
        </div>
      </div>
      <div class="history-state" data-testid="checkpoint-state">
        {selected && (
          <>
            <div class="row between">
              <h3>
                Checkpoint <span class="mono">{shortId(selected.checkpoint.checkpoint_id)}</span>
              </h3>
              {typeof selected.metadata?.run_id === "string" && (
                <a
                  class="small"
                  href={href(`/threads/${threadId}/runs/${selected.metadata.run_id}`)}
                >
                  its run
                </a>
              )}
            </div>
            <h4>Values then</h4>
            <JsonView value={selected.values} open={3} />
            <h4>Messages then</h4>
            <Conversation messages={selected.messages ?? []} />
            <details>
              <summary class="small muted">checkpoint metadata</summary>
              <JsonView value={selected.metadata ?? {}} open={2} />
            </details>
          </>
        )}
      </div>
    </div>
  );
}

function ThreadRuns({ threadId }: { threadId: string }) {
  const [offset, setOffset] = useState(0);
  const runs = useLoad(
    () => api<AcpRun[]>(`/threads/${threadId}/runs?limit=${PAGE}&offset=${offset}`),
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

export function RunTable({ runs }: { runs: Array<AcpRun & { kind?: string }> }) {
  return (
    <table class="table">
      <thead>
        <tr>
          <th>run</th>
          <th>agent</th>
          <th>status</th>
          <th>kind</th>
          <th>created</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => {
          const path =
            (run.kind ?? "stateful") === "stateful" && run.thread_id
              ? `/threads/${run.thread_id}/runs/${run.run_id}`
              : `/runs/${run.run_id}`;
          return (
            <tr key={run.run_id} class="clickable" onClick={() => navigate(path)}>
              <td>
                <a class="mono" href={href(path)}>
                  {shortId(run.run_id)}
                </a>
              </td>
              <td>
                <AgentLabel agentId={run.agent_id} />
              </td>
              <td>
                <StatusBadge status={run.status} />
              </td>
              <td class="small">{run.kind ?? "stateful"}</td>
              <td class="small">{formatTime(run.created_at)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function AgentLabel({ agentId }: { agentId: string }) {
  const name = useLoad(() => agentName(agentId), [agentId]);
  return <span>{name.data ?? shortId(agentId)}</span>;
}

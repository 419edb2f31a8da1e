import { useState } from "preact/hooks";
import { Empty, ErrorNote, StatusBadge } from "../components/common";
import { JsonField } from "../components/schema-form";
import { api, inspectorApi } from "../lib/api";
import { formatTime } from "../lib/format";
import { idPrefixes } from "../lib/ids";
import { href, navigate, type Route } from "../lib/router";
import type { AcpThread, RunInfo } from "../lib/types";
import { useLoad } from "../lib/use-load";
import { AgentLabel, Pager } from "./run-table";
import { ThreadDetail } from "./thread-detail";

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
  const list = threads.data ?? [];
  const ids = list.map((t) => t.thread_id);
  const prefixes = idPrefixes(ids);
  // Which agent each thread talks to: its last run's, for the whole page in one request.
  const lastRuns = useLoad(
    () =>
      ids.length === 0
        ? Promise.resolve<Record<string, RunInfo | null>>({})
        : api<Record<string, RunInfo | null>>(
            inspectorApi(`/threads/last-runs?thread_ids=${ids.join(",")}`),
          ),
    [ids.join(",")],
  );

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
              <th title="The agent of the thread's last run">agent</th>
              <th>status</th>
              <th>metadata</th>
              <th>last message</th>
              <th>updated</th>
            </tr>
          </thead>
          <tbody>
            {list.map((t) => {
              const last = lastRuns.data?.[t.thread_id];
              return (
                <tr
                  key={t.thread_id}
                  class="clickable"
                  data-thread={t.thread_id}
                  onClick={() => navigate(`/threads/${t.thread_id}`)}
                >
                  <td>
                    <a class="mono" href={href(`/threads/${t.thread_id}`)} title={t.thread_id}>
                      {prefixes.get(t.thread_id)}
                    </a>
                  </td>
                  <td class="c-agent">
                    {last ? (
                      <AgentLabel agentId={last.agent_id} />
                    ) : (
                      <span class="muted">{lastRuns.data ? "—" : "…"}</span>
                    )}
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
              );
            })}
          </tbody>
        </table>
        {threads.data && threads.data.length === 0 && <Empty>No threads match.</Empty>}
        <Pager offset={offset} count={threads.data?.length ?? 0} page={PAGE} onChange={setOffset} />
      </section>
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

import { useState } from "preact/hooks";
import { Empty, ErrorNote } from "../components/common";
import { JsonView } from "../components/json-view";
import { api } from "../lib/api";
import { formatTime } from "../lib/format";
import { idPrefixes, shortId, uuidTime } from "../lib/ids";
import { href } from "../lib/router";
import type { AcpThreadState } from "../lib/types";
import { useLoad } from "../lib/use-load";
import { Conversation } from "./conversation";

/** A thread's checkpoints, newest first, and the state and messages at the one picked. */
export function History({ threadId }: { threadId: string }) {
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
  const prefixes = idPrefixes(list.map((c) => c.checkpoint.checkpoint_id));
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
                  <span class="mono small" title={id}>
                    {prefixes.get(id)}
                  </span>
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

import { useEffect, useState } from "preact/hooks";
import { StatusBadge } from "../components/common";
import { agentName } from "../lib/agents";
import { formatDuration, formatTime } from "../lib/format";
import { idPrefixes, shortId } from "../lib/ids";
import { href, navigate } from "../lib/router";
import { executedMs, faceLabel, runOutcome, runPath } from "../lib/runs";
import type { RunInfo } from "../lib/types";
import { useLoad } from "../lib/use-load";

/**
 * Runs as rows: each id by the shortest prefix that tells it from the others, its agent, the
 * face it came through, how it ended (a cancelled run is not an error), when it was made and
 * how long it executed.
 */
export function RunTable({ runs }: { runs: RunInfo[] }) {
  const prefixes = idPrefixes(runs.map((r) => r.run_id));
  const now = useNow(runs.some((r) => r.status === "pending"));
  return (
    <table class="table runs" data-testid="run-table">
      <thead>
        <tr>
          <th>run</th>
          <th>agent</th>
          <th title="The protocol the run was started over">face</th>
          <th>status</th>
          <th>kind</th>
          <th>created</th>
          <th title="Time executing: its segments added up (waiting for an answer not counted)">
            duration
          </th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => {
          const path = runPath(run);
          return (
            <tr
              key={run.run_id}
              class="clickable"
              data-run={run.run_id}
              onClick={() => navigate(path)}
            >
              <td>
                <a class="mono" href={href(path)} title={run.run_id}>
                  {prefixes.get(run.run_id)}
                </a>
              </td>
              <td class="c-agent">
                <AgentLabel agentId={run.agent_id} />
              </td>
              <td class="c-face small">{faceLabel(run.face)}</td>
              <td>
                <StatusBadge status={runOutcome(run.status, run.output)} />
              </td>
              <td class="small">{run.kind ?? "stateful"}</td>
              <td class="small">{formatTime(run.created_at)}</td>
              <td class="small num c-duration">
                {formatDuration(executedMs(run.segments ?? [], now))}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The clock, ticking every second while `live` (a pending run's duration grows). */
export function useNow(live: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [live]);
  return now;
}

export function AgentLabel({ agentId }: { agentId: string }) {
  const name = useLoad(() => agentName(agentId), [agentId]);
  return <span>{name.data ?? shortId(agentId)}</span>;
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

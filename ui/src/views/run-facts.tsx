import { useMemo } from "preact/hooks";
import { formatDuration, formatTime } from "../lib/format";
import { shortId } from "../lib/ids";
import { href } from "../lib/router";
import type { RunSession } from "../lib/run-session";
import { executedMs, faceLabel } from "../lib/runs";
import { type RunUsage, runUsage } from "../lib/usage";
import { useNow } from "./run-table";

/**
 * The run at a glance: when it was made and ended, how long it executed, its segments and
 * frames, the stream modes asked for, the face it came through, the tokens it used and its
 * thread.
 */
export function RunFacts({ session }: { session: RunSession }) {
  const live = session.status === "pending";
  const now = useNow(live);
  const info = session.info;
  const segments = info?.segments ?? [];
  const entries = session.entries;
  const count = entries.length;
  const usage = useMemo(() => runUsage(entries), [entries, count]);
  // Before the run record is read (a run this page just started): from the frames received.
  const first = entries.find((e) => e.receivedAt !== null)?.receivedAt ?? null;
  const elapsed =
    segments.length > 0
      ? executedMs(segments, now)
      : first !== null
        ? (live ? now : entries.at(-1)!.receivedAt!) - first
        : null;
  const ended = live ? null : (segments.at(-1)?.ended_at ?? null);
  return (
    <dl class="facts" data-testid="run-facts">
      <div>
        <dt>created</dt>
        <dd data-testid="run-created">{formatTime(info?.created_at)}</dd>
      </div>
      <div>
        <dt>ended</dt>
        <dd data-testid="run-ended">{live ? "—" : formatTime(ended)}</dd>
      </div>
      <div>
        <dt>executing</dt>
        <dd data-testid="run-duration">{formatDuration(elapsed)}</dd>
      </div>
      <div>
        <dt>segments</dt>
        <dd>{segments.length || (count > 0 ? 1 : 0)}</dd>
      </div>
      <div>
        <dt>frames</dt>
        <dd>{count}</dd>
      </div>
      <div>
        <dt>stream modes</dt>
        <dd>{streamModes(info?.creation ?? session.request?.body)}</dd>
      </div>
      <div>
        <dt title="The protocol the run was started over">face</dt>
        <dd data-testid="run-face">{info ? faceLabel(info.face) : "…"}</dd>
      </div>
      <div>
        <dt title="From the usage of the run's RUN_FINISHED (or RUN_ERROR) events">tokens</dt>
        <dd data-testid="run-usage" title={usage ? usageDetail(usage) : "no usage reported"}>
          {usage ? usageLine(usage) : "—"}
        </dd>
      </div>
      {session.threadId && session.kind === "stateful" && (
        <div>
          <dt>thread</dt>
          <dd>
            <a class="mono" href={href(`/threads/${session.threadId}`)}>
              {shortId(session.threadId)}
            </a>
          </dd>
        </div>
      )}
    </dl>
  );
}

const count = (n: number) => n.toLocaleString("en-US");

/** "1,234 (1,000 in · 234 out)". */
function usageLine(usage: RunUsage): string {
  return `${count(usage.totalTokens)} (${count(usage.inputTokens)} in · ${count(usage.outputTokens)} out)`;
}

/** Each provider and model on a line of its own, with the parts of its totals. */
function usageDetail(usage: RunUsage): string {
  return usage.byModel
    .map((m) => {
      const name = [m.provider, m.model].filter(Boolean).join(" ") || "unnamed model";
      const parts = [`${count(m.inputTokens)} in`, `${count(m.outputTokens)} out`];
      if (m.cachedInputTokens) parts.push(`${count(m.cachedInputTokens)} cached`);
      if (m.reasoningTokens) parts.push(`${count(m.reasoningTokens)} reasoning`);
      return `${name}: ${parts.join(", ")}`;
    })
    .join("\n");
}

function streamModes(creation: unknown): string {
  const mode = (creation as Record<string, unknown> | undefined)?.stream_mode;
  if (Array.isArray(mode)) return mode.join(", ");
  return typeof mode === "string" ? mode : "values";
}

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { JsonView } from "../components/json-view";
import { VirtualList } from "../components/virtual-list";
import { formatBytes } from "../lib/format";
import { type FrameClock, frameClock } from "../lib/frame-times";
import type { Entry, RunSession } from "../lib/run-session";

const ROW_HEIGHT = 28;

/**
 * The run's frames in order: AG-UI events (from custom frames) with their time, lane and
 * size, and the ACP values and final frames between them. A virtual list, so a run of tens of
 * thousands of events scrolls as easily as a short one. Selecting a row shows the event and
 * the ACP frame that carried it beside the timeline (`FrameDetail`, placed by the run view).
 */
export function Timeline(props: {
  session: RunSession;
  selected: number | null;
  onSelect(seq: number | null): void;
}) {
  const { session, selected, onSelect } = props;
  const [filter, setFilter] = useState("");
  const [eventsOnly, setEventsOnly] = useState(false);
  const entries = session.entries;
  const count = entries.length;
  // Filtering is recomputed when frames arrive or the filter changes, not on every render.
  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    if (!needle && !eventsOnly) return entries;
    return entries.filter(
      (e) =>
        (!eventsOnly || e.event) &&
        (!needle ||
          e.type.toLowerCase().includes(needle) ||
          summary(e).toLowerCase().includes(needle)),
    );
  }, [entries, count, filter, eventsOnly]);
  const segments = session.info?.segments ?? [];
  const clock = useMemo(
    () => frameClock(entries, segments),
    [entries, count, segments.length, segments.at(-1)?.ended_at],
  );
  const events = entries.reduce((n, e) => n + (e.event ? 1 : 0), 0);
  const lanes = session.lanes;

  return (
    <section class="card timeline">
      <header class="card-head">
        <h2>
          Timeline{" "}
          <span class="muted small" data-testid="event-count">
            {events} AG-UI events · {count} ACP frames
          </span>
        </h2>
        <div class="card-actions">
          <input
            class="input small"
            placeholder="filter: type or text"
            value={filter}
            onInput={(e) => setFilter(e.currentTarget.value)}
          />
          <label class="check small">
            <input
              type="checkbox"
              checked={eventsOnly}
              onChange={(e) => setEventsOnly(e.currentTarget.checked)}
            />
            <span>events only</span>
          </label>
        </div>
      </header>
      <div class="timeline-head">
        <span class="c-seq">#</span>
        <span
          class="c-time"
          title="Since the run's start. Stored frames keep no time: of a run read back, only the events that open and close each segment (its start, each resume) are timed, unless the agent stamped its events."
        >
          time
        </span>
        <span class="c-lane">lane</span>
        <span class="c-type">type</span>
        <span class="c-sum">content</span>
        <span class="c-size">size</span>
      </div>
      <VirtualList
        items={shown}
        rowHeight={ROW_HEIGHT}
        height="min(52vh, 560px)"
        follow={session.connection === "live" || session.connection === "replaying"}
        render={(entry) => (
          <button
            type="button"
            class={`trow mode-${entry.mode}${entry.seq === selected ? " selected" : ""}`}
            data-type={entry.type}
            onClick={() => onSelect(entry.seq === selected ? null : entry.seq)}
          >
            <span class="c-seq">{entry.seq}</span>
            <TimeCell entry={entry} clock={clock} />
            <span class="c-lane" title={entry.lane ?? "the run itself"}>
              {entry.lane ? (lanes.get(entry.lane) ?? entry.lane.slice(-8)) : "main"}
            </span>
            <span class={`c-type type-${family(entry.type)}`}>{entry.type}</span>
            <span class="c-sum">{summary(entry)}</span>
            <span class="c-size">{formatBytes(entry.size)}</span>
          </button>
        )}
      />
    </section>
  );
}

function TimeCell({ entry, clock }: { entry: Entry; clock: FrameClock }) {
  const offset = clock.offset(entry);
  if (offset === null) {
    return (
      <span class="c-time untimed" title="Not timed: stored without a time">
        ·
      </span>
    );
  }
  return <span class="c-time">{`+${(offset / 1000).toFixed(3)}s`}</span>;
}

/**
 * One frame in full: the AG-UI event (or the ACP values) and the ACP frame that carried it.
 * Brought into view when it opens or changes, wherever the page puts it.
 */
export function FrameDetail({ entry, onClose }: { entry: Entry; onClose(): void }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.scrollIntoView({ block: "nearest" }), [entry.seq]);
  return (
    <div class="frame-detail" data-testid="frame-detail" ref={box}>
      <div class="row between">
        <strong>
          #{entry.seq} {entry.type}
        </strong>
        <button type="button" class="button small ghost" onClick={onClose}>
          Close
        </button>
      </div>
      <div class="stack">
        <div>
          <h4>{entry.event ? "AG-UI event" : "ACP values"}</h4>
          <JsonView value={entry.event ?? JSON.parse(entry.raw)} open={3} />
        </div>
        <div>
          <h4>ACP frame</h4>
          <pre class="code small sse">{`id: ${entry.seq}\nevent: agent_event\ndata: ${truncate(entry.raw, 4000)}`}</pre>
        </div>
      </div>
    </div>
  );
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

function family(type: string): string {
  if (type.startsWith("TEXT_")) return "text";
  if (type.startsWith("TOOL_")) return "tool";
  if (type.startsWith("STATE_") || type === "MESSAGES_SNAPSHOT") return "state";
  if (type.startsWith("RUN_")) return "run";
  if (type.startsWith("REASONING_")) return "reasoning";
  if (type.startsWith("ACTIVITY_")) return "activity";
  if (type.startsWith("SUBAGENT_")) return "subagent";
  if (type.startsWith("STEP_")) return "step";
  if (type === "values" || type === "final") return "acp";
  return "other";
}

/** One line saying what the frame carries. */
export function summary(entry: Entry): string {
  const e = entry.event;
  if (!e) {
    if (entry.mode === "final") {
      const output = entry.data.output as Record<string, unknown> | undefined;
      const detail = output?.type === "error" ? `: ${String(output.description ?? "")}` : "";
      return `run ${String(entry.data.status)}${detail}`;
    }
    const values = entry.data.values as Record<string, unknown> | undefined;
    const messages = entry.messageCount ?? 0;
    return `values {${Object.keys(values ?? {}).join(", ")}} · ${messages} messages`;
  }
  const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  switch (e.type) {
    case "TEXT_MESSAGE_CONTENT":
    case "TOOL_CALL_ARGS":
    case "REASONING_MESSAGE_CONTENT":
      return text(e.delta);
    case "TEXT_MESSAGE_START":
      return `${text(e.role ?? "assistant")} message ${text(e.messageId)}`;
    case "TOOL_CALL_START":
      return `${text(e.toolCallName)}(…) ${text(e.toolCallId)}`;
    case "TOOL_CALL_RESULT":
      return `${text(e.toolCallId)} → ${text(e.content)}`;
    case "STATE_SNAPSHOT":
      return text(e.snapshot);
    case "STATE_DELTA":
      return ((e.delta as Array<Record<string, unknown>>) ?? [])
        .map((op) => `${text(op.op)} ${text(op.path)}`)
        .join(", ");
    case "RUN_STARTED":
      return `run ${text(e.runId)}`;
    case "RUN_FINISHED": {
      const outcome = e.outcome as Record<string, unknown> | undefined;
      const said =
        outcome?.type === "interrupt"
          ? "interrupt: waiting for input"
          : outcome?.type === "cancelled"
            ? "cancelled by the agent"
            : e.result === undefined
              ? "finished"
              : `result ${text(e.result)}`;
      return `${said}${tokens(e.usage)}`;
    }
    case "RUN_ERROR":
      return `${text(e.message)}${tokens(e.usage)}`;
    case "STEP_STARTED":
    case "STEP_FINISHED":
      return text(e.stepName);
    case "CUSTOM":
      return `${text(e.name)} ${text(e.value)}`;
    case "ACTIVITY_SNAPSHOT":
    case "ACTIVITY_DELTA":
      return `${text(e.activityType)} ${text(e.messageId)}`;
    case "SUBAGENT_STARTED":
    case "SUBAGENT_FINISHED":
    case "SUBAGENT_ERROR":
      return `${text(e.name ?? e.subagentRunId)}`;
    case "MESSAGES_SNAPSHOT":
      return `${(e.messages as unknown[] | undefined)?.length ?? 0} messages`;
    default:
      return "";
  }
}

/** " · 1,234 tokens" for a terminal event's `usage`, else nothing. */
function tokens(usage: unknown): string {
  if (!Array.isArray(usage)) return "";
  const total = (usage as Array<Record<string, unknown>>).reduce((n, u) => {
    const sum =
      typeof u.totalTokens === "number"
        ? u.totalTokens
        : Number(u.inputTokens ?? 0) + Number(u.outputTokens ?? 0);
    return n + (Number.isFinite(sum) ? sum : 0);
  }, 0);
  return ` · ${total.toLocaleString("en-US")} tokens`;
}

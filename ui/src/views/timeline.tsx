import { useMemo, useState } from "preact/hooks";
import { JsonView } from "../components/json-view";
import { VirtualList } from "../components/virtual-list";
import { formatBytes } from "../lib/format";
import type { Entry, RunSession } from "../lib/run-session";

const ROW_HEIGHT = 28;

/**
 * The run's frames in order: AG-UI events (from custom frames) with their time, lane and
 * size, and the ACP values and final frames between them. A virtual list, so a run of tens of
 * thousands of events scrolls as easily as a short one. Selecting a row shows the event and
 * the ACP frame that carried it side by side.
 */
export function Timeline({ session }: { session: RunSession }) {
  const [selected, setSelected] = useState<number | null>(null);
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
  const origin = useMemo(() => timeOrigin(entries), [entries, count > 0]);
  const current = selected === null ? undefined : session.entries.find((e) => e.seq === selected);
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
        <span class="c-time">time</span>
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
            onClick={() => setSelected(entry.seq === selected ? null : entry.seq)}
          >
            <span class="c-seq">{entry.seq}</span>
            <span class="c-time">{formatOffset(entry, origin)}</span>
            <span class="c-lane" title={entry.lane ?? "the run itself"}>
              {entry.lane ? (lanes.get(entry.lane) ?? entry.lane.slice(-8)) : "main"}
            </span>
            <span class={`c-type type-${family(entry.type)}`}>{entry.type}</span>
            <span class="c-sum">{summary(entry)}</span>
            <span class="c-size">{formatBytes(entry.size)}</span>
          </button>
        )}
      />
      {current && <FrameDetail entry={current} onClose={() => setSelected(null)} />}
    </section>
  );
}

function FrameDetail({ entry, onClose }: { entry: Entry; onClose(): void }) {
  return (
    <div class="frame-detail" data-testid="frame-detail">
      <div class="row between">
        <strong>
          #{entry.seq} {entry.type}
        </strong>
        <button type="button" class="button small ghost" onClick={onClose}>
          Close
        </button>
      </div>
      <div class="two">
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

interface Origin {
  received: number | null;
  stamped: number | null;
}

function timeOrigin(entries: Entry[]): Origin {
  const first = entries.find((e) => e.receivedAt !== null);
  const stamped = entries.find((e) => typeof e.event?.timestamp === "number");
  return {
    received: first?.receivedAt ?? null,
    stamped: (stamped?.event?.timestamp as number | undefined) ?? null,
  };
}

/** Time since the run's first frame: as received live, else from the events' own timestamps. */
function formatOffset(entry: Entry, origin: Origin): string {
  if (entry.receivedAt !== null && origin.received !== null) {
    return `+${((entry.receivedAt - origin.received) / 1000).toFixed(3)}s`;
  }
  const stamp = entry.event?.timestamp;
  if (typeof stamp === "number" && origin.stamped !== null) {
    return `+${((stamp - origin.stamped) / 1000).toFixed(3)}s`;
  }
  return "stored";
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
      if (outcome?.type === "interrupt") return "interrupt: waiting for input";
      return e.result === undefined ? "finished" : `result ${text(e.result)}`;
    }
    case "RUN_ERROR":
      return text(e.message);
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

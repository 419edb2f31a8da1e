import { useEffect, useState } from "preact/hooks";
import { CopyButton, ErrorNote, StatusBadge, Tabs } from "../components/common";
import { JsonView } from "../components/json-view";
import { agentName, descriptorOf } from "../lib/agents";
import { toCurl } from "../lib/curl";
import { pretty } from "../lib/format";
import { shortId } from "../lib/ids";
import { href } from "../lib/router";
import { RunSession } from "../lib/run-session";
import { useLoad } from "../lib/use-load";
import { Conversation } from "./conversation";
import { InterruptPanel } from "./interrupt-panel";
import { RunAnswers } from "./run-answers";
import { RunFacts } from "./run-facts";
import { StateView } from "./state-view";
import { FrameDetail, Timeline } from "./timeline";

/** Re-renders the caller whenever the session has news (at most once per animation frame). */
function useSession(runId: string): RunSession {
  const session = RunSession.open(runId);
  const [, setTick] = useState(0);
  useEffect(() => session.subscribe(() => setTick((t) => t + 1)), [session]);
  return session;
}

type SideTab = "conversation" | "state" | "output" | "request" | "frame";

/** One run, live or finished: status and timing, timeline, conversation, state, interrupts. */
export function RunView({ runId }: { runId: string }) {
  const session = useSession(runId);
  if (session.missing) return <RunNotFound runId={runId} />;
  return <RunPage session={session} />;
}

/** A run the server does not have (deleted, mistyped, or another caller's): nothing live. */
function RunNotFound({ runId }: { runId: string }) {
  return (
    <div class="page run-missing" data-testid="run-missing">
      <header class="page-head">
        <div>
          <div class="crumbs">
            <a href={href("/runs")}>runs</a> / run
          </div>
          <h1>No such run</h1>
          <div class="muted small mono">run_id {runId}</div>
        </div>
      </header>
      <div class="note" role="alert">
        This server has no run <code>{runId}</code> that you may see: it may have been deleted
        (rolled back, or forgotten after its retention time), the id may be mistyped, or it belongs
        to another API key. See the <a href={href("/runs")}>recent runs</a>.
      </div>
    </div>
  );
}

function RunPage({ session }: { session: RunSession }) {
  const [tab, setTab] = useState<SideTab>("conversation");
  const [selected, setSelected] = useState<number | null>(null);
  const select = (seq: number | null) => {
    setSelected(seq);
    setTab(seq === null ? "conversation" : "frame");
  };
  const current = selected === null ? undefined : session.entries.find((e) => e.seq === selected);
  const descriptor = useLoad(
    () => (session.agentId ? descriptorOf(session.agentId) : Promise.resolve(undefined)),
    [session.agentId],
  );
  const name = useLoad(
    () => (session.agentId ? agentName(session.agentId) : Promise.resolve("")),
    [session.agentId],
  );
  const latest = session.latest;
  const outcome = session.outcome;
  // Nothing said about the run (no status, nothing to cancel) until the server described it.
  const known = session.info !== null || session.request !== null || session.entries.length > 0;
  const finalSeq = session.entries.findLast((e) => e.mode === "final")?.seq ?? 0;

  return (
    <div
      class="run-view"
      data-status={session.status}
      data-outcome={outcome}
      data-connection={session.connection}
    >
      <header class="page-head">
        <div>
          <div class="crumbs">
            {session.threadId && session.kind === "stateful" ? (
              <a href={href(`/threads/${session.threadId}`)}>thread {shortId(session.threadId)}</a>
            ) : (
              <a href={href("/runs")}>runs</a>
            )}{" "}
            / run
          </div>
          <h1>
            {session.agentId ? (
              <a href={href(`/agents/${session.agentId}`)}>{name.data || "run"}</a>
            ) : (
              "run"
            )}{" "}
            {known && <StatusBadge status={outcome} />}{" "}
            <span class="muted small connection">{connectionLabel(session)}</span>
          </h1>
          <div class="muted small mono">
            run_id {session.runId} · {session.kind}
          </div>
        </div>
        {known && <RunActions session={session} />}
      </header>

      <ErrorNote error={session.error} />
      {session.deleted && (
        <div class="note">
          Rolled back: the run was deleted and its thread restored to before it.
        </div>
      )}
      <RunFacts session={session} />
      {session.status === "interrupted" && (
        <InterruptPanel
          // Built again once the descriptor (resume schemas) arrives, or a new interrupt does.
          key={`${finalSeq}-${descriptor.data ? "described" : "pending"}`}
          session={session}
          descriptor={descriptor.data}
        />
      )}
      <RunAnswers session={session} />
      <RunEndNote session={session} />

      <div class="run-grid">
        <Timeline session={session} selected={selected} onSelect={select} />
        <section class="card side">
          <div class="card-body">
            <Tabs
              active={tab === "frame" && !current ? "conversation" : tab}
              onChange={setTab}
              tabs={[
                { id: "conversation", label: `Conversation (${latest?.messages.length ?? 0})` },
                { id: "state", label: `State (${session.versions.length})` },
                { id: "output", label: "Output" },
                { id: "request", label: "Request" },
                ...(current ? [{ id: "frame" as const, label: `Frame #${current.seq}` }] : []),
              ]}
            />
            <div class="tab-body">
              {tab === "frame" && current && (
                <FrameDetail entry={current} onClose={() => select(null)} />
              )}
              {(tab === "conversation" || (tab === "frame" && !current)) && (
                <Conversation messages={latest?.messages ?? []} lanes={session.lanes} />
              )}
              {tab === "state" && <StateView versions={session.versions} />}
              {tab === "output" &&
                (session.output ? (
                  <JsonView value={session.output} open={3} />
                ) : (
                  <div class="muted">The run has no output yet.</div>
                ))}
              {tab === "request" && <RequestTab session={session} />}
            </div>
          </div>
        </section>
      </div>
    </div>
  );
}

function connectionLabel(session: RunSession): string {
  switch (session.connection) {
    case "connecting":
      return "loading…";
    case "live":
      return session.status === "pending" ? "● live" : "";
    case "replaying":
      return "replaying…";
    case "failed":
      return "connection lost";
    default:
      return "";
  }
}

function RunActions({ session }: { session: RunSession }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const cancellable = session.status === "pending" || session.status === "interrupted";
  const act = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="actions">
      {cancellable && !session.deleted && (
        <>
          <button
            type="button"
            class="button danger"
            disabled={busy}
            onClick={() => act(() => session.cancel("interrupt"))}
            title="End the run as cancelled, keeping what it did"
          >
            Cancel
          </button>
          <button
            type="button"
            class="button ghost"
            disabled={busy}
            onClick={() => act(() => session.cancel("rollback"))}
            title="Cancel, delete the run and restore the thread to before it"
          >
            Cancel &amp; roll back
          </button>
        </>
      )}
      {session.connection === "replaying" ? (
        <button type="button" class="button" onClick={() => session.stopReplay()}>
          Stop replay
        </button>
      ) : (
        session.connection === "ended" &&
        session.entries.length > 0 && (
          <button
            type="button"
            class="button"
            onClick={() => session.replay()}
            title="Play the stored frames again"
          >
            Replay
          </button>
        )
      )}
      {error && <span class="field-error small">{error}</span>}
    </div>
  );
}

/**
 * How the run ended, when not well: a failure or a timeout in red, a cancellation (by a caller,
 * or by the agent itself) as the plain fact it is.
 */
function RunEndNote({ session }: { session: RunSession }) {
  const output = session.output;
  if (output?.type !== "error") return null;
  const outcome = session.outcome;
  if (outcome !== "error" && outcome !== "timeout" && outcome !== "cancelled") return null;
  return (
    <div class={`note ${outcome === "cancelled" ? "" : "error"}`} data-testid="run-end">
      {outcome === "cancelled" ? "Cancelled: " : ""}
      {String(output.description ?? "the run failed")}{" "}
      <span class="muted">(errcode {String(output.errcode)})</span>
    </div>
  );
}

function RequestTab({ session }: { session: RunSession }) {
  const request = session.request;
  const follow = toCurl({
    method: "GET",
    path: `${session.path}/stream`,
    headers: { "last-event-id": "0" },
    stream: true,
  });
  return (
    <div class="stack">
      {request ? (
        <>
          <div class="row between">
            <code>
              {request.method} {request.path}
            </code>
            <CopyButton text={toCurl({ ...request, stream: true })} label="Copy as curl" />
          </div>
          <pre class="code">{pretty(request.body)}</pre>
        </>
      ) : (
        session.info && (
          <>
            <div class="muted small">The run was created with:</div>
            <pre class="code">{pretty(session.info.creation)}</pre>
          </>
        )
      )}
      <div class="row between">
        <span class="small">Replay and follow it from the ACP API:</span>
        <CopyButton text={follow} label="Copy as curl" />
      </div>
      <pre class="code small">{follow}</pre>
    </div>
  );
}

import { JsonView } from "../components/json-view";
import type { Entry } from "../lib/run-entry";
import type { RunSession } from "../lib/run-session";
import type { ResumeEntry } from "../lib/types";

/**
 * What was answered to each interrupt the run stopped at: every resumed segment keeps the
 * answers it was started with (whoever gave them: this page, another tab, a client of any
 * face), shown with the question they answer.
 */
export function RunAnswers({ session }: { session: RunSession }) {
  const segments = session.info?.segments ?? [];
  const resumed = segments.flatMap((segment, index) =>
    segment.resume && segment.resume.length > 0 ? [{ index, entries: segment.resume }] : [],
  );
  if (resumed.length === 0) return null;
  const asked = askedInterrupts(session.entries);
  return (
    <section class="card answers" data-testid="run-answers">
      <header class="card-head">
        <h2>{resumed.length === 1 ? "Answered" : `Answered ${resumed.length} times`}</h2>
      </header>
      <div class="card-body stack">
        {resumed.map(({ index, entries }) => (
          <div key={index} class="stack">
            {resumed.length > 1 && <div class="muted small">resume {index}</div>}
            {entries.map((entry) => (
              <Answer key={entry.interruptId} entry={entry} asked={asked.get(entry.interruptId)} />
            ))}
          </div>
        ))}
      </div>
    </section>
  );
}

function Answer({ entry, asked }: { entry: ResumeEntry; asked?: Record<string, unknown> }) {
  const question = typeof asked?.message === "string" ? asked.message : undefined;
  const reason = typeof asked?.reason === "string" ? asked.reason : undefined;
  return (
    <div class="subcard answer" data-interrupt={entry.interruptId}>
      <div class="row between">
        <h3>
          {reason && <span class="tag">{reason}</span>}{" "}
          {question ?? `interrupt ${entry.interruptId}`}
        </h3>
        <span class={`tag ${entry.status === "resolved" ? "" : "warn"}`}>
          {entry.status === "resolved" ? "answered" : "abandoned"}
        </span>
      </div>
      {entry.payload === undefined ? (
        <div class="muted small">no payload</div>
      ) : (
        <JsonView value={entry.payload} open={3} />
      )}
    </div>
  );
}

/** The interrupts the run's segments ended with, by id (from their RUN_FINISHED events). */
function askedInterrupts(entries: readonly Entry[]): Map<string, Record<string, unknown>> {
  const asked = new Map<string, Record<string, unknown>>();
  for (const entry of entries) {
    if (entry.type !== "RUN_FINISHED") continue;
    const outcome = entry.event?.outcome as { type?: string; interrupts?: unknown[] } | undefined;
    if (outcome?.type !== "interrupt" || !Array.isArray(outcome.interrupts)) continue;
    for (const interrupt of outcome.interrupts as Array<Record<string, unknown>>) {
      if (typeof interrupt.id === "string") asked.set(interrupt.id, interrupt);
    }
  }
  return asked;
}

import { useState } from "preact/hooks";
import { CopyButton, ErrorNote } from "../components/common";
import { JsonView } from "../components/json-view";
import { initialValue, missingFields, SchemaForm } from "../components/schema-form";
import { toCurl } from "../lib/curl";
import type { RunSession } from "../lib/run-session";
import type { AcpDescriptor, JsonSchema } from "../lib/types";

/**
 * What an interrupted run asked, and a resume form for each open interrupt built from the
 * interrupt's own `responseSchema`, else from the descriptor's resume schema for its type.
 * Submitting resumes the run; the timeline then continues with the next segment.
 */
export function InterruptPanel({
  session,
  descriptor,
}: {
  session: RunSession;
  descriptor?: AcpDescriptor;
}) {
  const open = session.interrupts;
  const schemas = open.map(({ type, interrupt }) => resumeSchema(type, interrupt, descriptor));
  const [answers, setAnswers] = useState<unknown[]>(() => schemas.map((s) => initialValue(s)));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (open.length === 0) return null;
  const missing = open.flatMap(({ type }, i) => missingFields(schemas[i]!, answers[i], type));

  const body: Record<string, unknown> = {};
  const counts = new Map<string, number>();
  for (const { type } of open) counts.set(type, (counts.get(type) ?? 0) + 1);
  open.forEach(({ type }, i) => {
    const answer = answers[i] ?? {};
    if ((counts.get(type) ?? 0) > 1) body[type] = [...((body[type] as unknown[]) ?? []), answer];
    else body[type] = answer;
  });

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await session.resume(body);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card interrupt" onSubmit={submit} data-testid="interrupt-panel">
      <header class="card-head">
        <h2>The agent is waiting for you</h2>
        <CopyButton
          text={toCurl({ method: "POST", path: session.path, body })}
          label="Copy resume as curl"
        />
      </header>
      <div class="card-body stack">
        {open.map(({ type, interrupt }, i) => (
          <div key={`${type}-${i}`} class="subcard">
            <div class="row between">
              <h3>
                <span class="tag warn">{type}</span>{" "}
                {typeof interrupt.message === "string"
                  ? interrupt.message
                  : "The run stopped for input."}
              </h3>
              {typeof interrupt.id === "string" && (
                <span class="muted small mono">{interrupt.id}</span>
              )}
            </div>
            <details>
              <summary class="small muted">interrupt as sent</summary>
              <JsonView value={interrupt} open={2} />
            </details>
            <div class="form-label">
              Your answer{" "}
              <span class="muted small">
                {interrupt.responseSchema
                  ? "from the interrupt's responseSchema"
                  : "from the descriptor's resume schema"}
              </span>
            </div>
            <SchemaForm
              schema={schemas[i]!}
              value={answers[i]}
              onChange={(value) => setAnswers(answers.map((a, j) => (j === i ? value : a)))}
              path={type}
            />
          </div>
        ))}
        <ErrorNote error={error} />
        <div class="row end">
          {missing.length > 0 && (
            <span class="muted small" data-testid="resume-missing">
              still to answer: {missing.join(", ")}
            </span>
          )}
          <button type="submit" class="button primary" disabled={busy || missing.length > 0}>
            {busy ? "Resuming…" : "Resume"}
          </button>
        </div>
      </div>
    </form>
  );
}

function resumeSchema(
  type: string,
  interrupt: Record<string, unknown>,
  descriptor: AcpDescriptor | undefined,
): JsonSchema {
  if (interrupt.responseSchema && typeof interrupt.responseSchema === "object") {
    return interrupt.responseSchema as JsonSchema;
  }
  const entries = descriptor?.specs.interrupts ?? [];
  const entry =
    entries.find((e) => e.interrupt_type === type) ?? entries.find((e) => e.interrupt_type === "*");
  return entry?.resume_payload ?? { type: "object" };
}

import type { Interrupt, ResumeEntry } from "@ag-ui/core";
import { invalid } from "../../util/errors.js";

/**
 * ACP ⇄ AG-UI interrupts.
 *
 * ACP `interrupt` object: keyed by interrupt type (the AG-UI `reason`; "interrupt" when the
 * agent gave none). The value is the AG-UI interrupt itself when the type occurs once, and an
 * array of them (in the agent's order) when several interrupts share a type, so none is lost.
 *
 * Resume body: either `{<interrupt_type>: payload}` (one payload per type; an array of payloads
 * in the same order when the type occurred several times), or the native AG-UI form
 * `{"resume": [ResumeEntry, …]}`. Either way every open interrupt must be answered.
 */
export const DEFAULT_INTERRUPT_TYPE = "interrupt";

export function interruptType(interrupt: Interrupt): string {
  return typeof interrupt.reason === "string" && interrupt.reason !== ""
    ? interrupt.reason
    : DEFAULT_INTERRUPT_TYPE;
}

export function toAcpInterrupt(interrupts: Interrupt[]): Record<string, unknown> {
  const byType = groupByType(interrupts);
  const acp: Record<string, unknown> = {};
  for (const [type, group] of byType) acp[type] = group.length === 1 ? group[0] : group;
  return acp;
}

function groupByType(interrupts: Interrupt[]): Map<string, Interrupt[]> {
  const byType = new Map<string, Interrupt[]>();
  for (const interrupt of interrupts) {
    const type = interruptType(interrupt);
    const group = byType.get(type);
    if (group) group.push(interrupt);
    else byType.set(type, [interrupt]);
  }
  return byType;
}

export interface ResumeValidators {
  /** Validates one ACP resume payload for a type; returns an error message or null. */
  validatePayload(type: string, payload: unknown): string | null;
  /**
   * Validates a payload against the interrupt's own `responseSchema`, when it has one; `at`
   * names the payload's root in the message. Returns an error message or null.
   */
  validateResponse?(interrupt: Interrupt, payload: unknown, at: string): string | null;
  /** Validates one native AG-UI ResumeEntry against the bundled schema. */
  validateEntry(entry: unknown): string | null;
}

/** Turns a resume body into AG-UI resume entries answering every open interrupt, or throws 422. */
export function resumeEntries(
  body: Record<string, unknown>,
  open: Interrupt[],
  validators: ResumeValidators,
): ResumeEntry[] {
  const openIds = new Set(open.map((interrupt) => interrupt.id));
  if ("resume" in body && Array.isArray(body.resume) && !openTypes(open).has("resume")) {
    return nativeEntries(body.resume, openIds, open, validators);
  }

  const entries: ResumeEntry[] = [];
  const byType = groupByType(open);
  for (const key of Object.keys(body)) {
    if (!byType.has(key)) {
      throw invalid(
        `resume names interrupt type "${key}", but the run's open interrupts are of type ${listTypes(byType)}`,
      );
    }
  }
  for (const [type, group] of byType) {
    if (!(type in body)) {
      throw invalid(
        `resume must answer every open interrupt: missing "${type}" (open: ${listTypes(byType)})`,
      );
    }
    const value = body[type];
    let payloads: unknown[];
    if (group.length === 1) payloads = [value];
    else if (Array.isArray(value) && value.length === group.length) payloads = value;
    else {
      throw invalid(
        `resume.${type} must be an array of ${group.length} payloads, one per open "${type}" interrupt in order`,
      );
    }
    group.forEach((interrupt, index) => {
      const payload = payloads[index];
      const where = `resume.${type}${group.length > 1 ? `[${index}]` : ""}`;
      const problem =
        validators.validatePayload(type, payload) ??
        responseProblem(interrupt, payload, type, validators);
      if (problem) throw invalid(`${where}: ${problem}`);
      const entry: ResumeEntry = { interruptId: interrupt.id, status: "resolved" };
      if (payload !== null && payload !== undefined) entry.payload = payload;
      entries.push(entry);
    });
  }
  return entries;
}

function nativeEntries(
  list: unknown[],
  openIds: Set<string>,
  open: Interrupt[],
  validators: ResumeValidators,
): ResumeEntry[] {
  const answered = new Set<string>();
  list.forEach((entry, index) => {
    const problem = validators.validateEntry(entry);
    if (problem) throw invalid(`resume[${index}]: ${problem}`);
    const id = (entry as ResumeEntry).interruptId;
    if (!openIds.has(id))
      throw invalid(`resume[${index}].interruptId "${id}" is not an open interrupt of this run`);
    if (answered.has(id)) throw invalid(`resume[${index}] answers interrupt "${id}" twice`);
    answered.add(id);
    const resolved = entry as ResumeEntry;
    // An answer without a payload (a plain "go ahead") has nothing to check against a schema.
    if (resolved.status === "resolved" && resolved.payload !== undefined) {
      const interrupt = open.find((candidate) => candidate.id === id)!;
      const type = interruptType(interrupt);
      const payloadProblem =
        validators.validatePayload(type, resolved.payload) ??
        responseProblem(interrupt, resolved.payload, type, validators);
      if (payloadProblem) throw invalid(`resume[${index}].payload: ${payloadProblem}`);
    }
  });
  const missing = [...openIds].filter((id) => !answered.has(id));
  if (missing.length > 0) {
    throw invalid(
      `resume must answer every open interrupt: missing ${missing.map((id) => `"${id}"`).join(", ")}`,
    );
  }
  return list as ResumeEntry[];
}

/** The interrupt's own `responseSchema` has a say on an answer that carries a payload. */
function responseProblem(
  interrupt: Interrupt,
  payload: unknown,
  at: string,
  validators: ResumeValidators,
): string | null {
  if (payload === undefined || payload === null || !validators.validateResponse) return null;
  return validators.validateResponse(interrupt, payload, at);
}

function openTypes(open: Interrupt[]): Set<string> {
  return new Set(open.map(interruptType));
}

function listTypes(byType: Map<string, Interrupt[]>): string {
  return [...byType.keys()].map((type) => `"${type}"`).join(", ");
}

/**
 * Our thread state ⇄ LangGraph values, and AG-UI interrupts ⇄ LangGraph interrupts.
 *
 * LangGraph values are one object: the agent's AG-UI state (an object; any other state is
 * `{"$state": …}`, as ACP values have it) with `messages` set to the thread's messages as
 * LangChain dicts. An agent state that has a `messages` key of its own is shadowed by them.
 *
 * An AG-UI interrupt `{id, reason?, message?, responseSchema?, …}` is the LangGraph interrupt
 * `{id, value: {reason?, message?, responseSchema?, …}}`: LangGraph's has no field for a schema,
 * so everything the agent said of the interrupt goes in its value.
 */

import { invalid } from "../../util/errors.js";
import { acpToAguiMessages, aguiToAcpMessages } from "../acp/messages.js";
import { isObject, storedValues, threadStateForAgent } from "../acp/values.js";
import { acpToLangchainMessages, langchainToAcpMessages } from "./messages.js";

type Rec = Record<string, unknown>;

/** Thread (or checkpoint, or run output) values and messages as LangGraph values. */
export function toLangGraphValues(values: unknown, messages: unknown): Rec {
  return { ...storedValues(values ?? null), messages: acpToLangchainMessages(messages) };
}

export interface LangGraphInterrupt {
  id: string;
  value: Rec;
}

/** AG-UI interrupts (as a run record keeps them) as LangGraph interrupts. */
export function toLangGraphInterrupts(interrupts: readonly unknown[]): LangGraphInterrupt[] {
  return interrupts.map((interrupt) => {
    const { id, ...value } = (interrupt ?? {}) as Rec;
    return { id: String(id ?? ""), value };
  });
}

/** The interrupts of an ACP interrupt output (`{type: "interrupt", interrupt: {type: …}}`). */
export function interruptsOfOutput(output: unknown): unknown[] {
  const byType = (output as { interrupt?: unknown } | null)?.interrupt;
  if (typeof byType !== "object" || byType === null) return [];
  return Object.values(byType as Rec).flatMap((entry) => (Array.isArray(entry) ? entry : [entry]));
}

/**
 * `command.resume` as the native AG-UI resume body (`{resume: [ResumeEntry, …]}`), which the run
 * service checks as every resume is: a map keyed by every open interrupt's id answers each with
 * its own value; any other value answers the one open interrupt (several open ones need the map).
 */
export function resumeBodyOf(value: unknown, open: readonly unknown[]): Rec {
  const ids = open.map((interrupt) => String((interrupt as Rec | null)?.id ?? ""));
  const keyedById =
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length > 0 &&
    Object.keys(value).every((key) => ids.includes(key));
  if (keyedById) {
    return {
      resume: Object.entries(value as Rec).map(([interruptId, payload]) =>
        entry(interruptId, payload),
      ),
    };
  }
  if (ids.length > 1) {
    return {
      // Left for the run service to refuse, naming the interrupts that went unanswered.
      resume: [entry(ids[0]!, value)],
    };
  }
  return { resume: ids.map((interruptId) => entry(interruptId, value)) };
}

function entry(interruptId: string, payload: unknown): Rec {
  return payload === undefined || payload === null
    ? { interruptId, status: "resolved" }
    : { interruptId, status: "resolved", payload };
}

/**
 * A LangGraph state update (`POST /threads/{id}/state`) applied to a thread's values and
 * messages, as LangGraph's reducers would: `messages` are added by id (one with a known id
 * replaces it), every other key replaces the agent state's key. Returns what the thread
 * stores: values, and messages in our stored form.
 */
export function applyStateUpdate(
  update: unknown,
  values: unknown,
  messages: readonly unknown[] | null,
): { values: Record<string, unknown>; messages: Record<string, unknown>[] } {
  const current = (messages ?? []) as Record<string, unknown>[];
  if (update === null || update === undefined)
    return { values: storedValues(values), messages: current };
  if (!isObject(update)) throw invalid("values must be an object (the state update), or null");
  const { messages: added, ...rest } = update;
  const state = threadStateForAgent(values, undefined);
  const base = isObject(state) ? state : { $state: state };
  const next = [...current];
  if (added !== undefined && added !== null) {
    const stored = aguiToAcpMessages(
      acpToAguiMessages(langchainToAcpMessages(added, "values/messages")),
    ) as unknown as Record<string, unknown>[];
    for (const message of stored) {
      const at = next.findIndex((known) => known.id === message.id);
      if (at >= 0) next[at] = message;
      else next.push(message);
    }
  }
  return { values: { ...base, ...rest }, messages: next };
}

/** The order verifier's state (verify.ts): its error, who owns an entity, what is open. */
import type { EventRecord, FaultRule } from "./types.js";

/** Thrown for an ordering violation; the pipeline turns it into a PipelineFault. */
export class VerifyError extends Error {
  constructor(
    readonly rule: FaultRule,
    message: string,
  ) {
    super(message);
  }
}

/** Owner of an entity: a subagentRunId, or PARENT for the parent agent. */
export const PARENT: unique symbol = Symbol("parent agent");
export type Owner = string | typeof PARENT;

export const ownerOf = (tag: string | undefined): Owner => (tag === undefined ? PARENT : tag);
export const ownerLabel = (owner: Owner | undefined): string =>
  owner === PARENT || owner === undefined ? "(the parent agent)" : owner;

export const str = (value: unknown): string | undefined =>
  typeof value === "string" ? value : undefined;

/** Nothing open (a collection never made). */
const NONE_OPEN: readonly never[] = [];

/** Who opened each entity, by kind; each map made on first use. */
class OwnerMaps {
  #message?: Map<string, Owner>;
  #toolCall?: Map<string, Owner>;
  #activity?: Map<string, Owner>;
  #reasoning?: Map<string, Owner>;

  get message(): Map<string, Owner> {
    this.#message ??= new Map();
    return this.#message;
  }
  get toolCall(): Map<string, Owner> {
    this.#toolCall ??= new Map();
    return this.#toolCall;
  }
  get activity(): Map<string, Owner> {
    this.#activity ??= new Map();
    return this.#activity;
  }
  get reasoning(): Map<string, Owner> {
    this.#reasoning ??= new Map();
    return this.#reasoning;
  }

  clear(): void {
    this.#message = undefined;
    this.#toolCall = undefined;
    this.#activity = undefined;
    this.#reasoning = undefined;
  }
}

/**
 * The entities a run has open (messages, tool calls, reasoning, steps, subagents) and who opened
 * them. Each collection is made on first use and dropped when a run starts: a verifier lives as
 * long as its run, and most runs only ever open a text message or a tool call, so twelve empty
 * collections made up front were 2 KB held per open run for nothing.
 */
export class OpenEntities {
  #activeMessages?: Set<string>;
  #activeToolCalls?: Set<string>;
  #activeSpans?: Set<string>;
  #activeReasoning?: Set<string>;
  readonly owners = new OwnerMaps();
  #steps?: Map<Owner, Set<string>>;
  #activeSubagents?: Set<string>;
  #closedSubagents?: Set<string>;

  get activeMessages(): Set<string> {
    this.#activeMessages ??= new Set();
    return this.#activeMessages;
  }
  get activeToolCalls(): Set<string> {
    this.#activeToolCalls ??= new Set();
    return this.#activeToolCalls;
  }
  get activeSpans(): Set<string> {
    this.#activeSpans ??= new Set();
    return this.#activeSpans;
  }
  get activeReasoning(): Set<string> {
    this.#activeReasoning ??= new Set();
    return this.#activeReasoning;
  }
  get steps(): Map<Owner, Set<string>> {
    this.#steps ??= new Map();
    return this.#steps;
  }
  get activeSubagents(): Set<string> {
    this.#activeSubagents ??= new Set();
    return this.#activeSubagents;
  }
  get closedSubagents(): Set<string> {
    this.#closedSubagents ??= new Set();
    return this.#closedSubagents;
  }

  /** Forgets everything: a new run starts with nothing open. */
  clear(): void {
    this.#activeMessages = undefined;
    this.#activeToolCalls = undefined;
    this.#activeSpans = undefined;
    this.#activeReasoning = undefined;
    this.owners.clear();
    this.#steps = undefined;
    this.#activeSubagents = undefined;
    this.#closedSubagents = undefined;
  }

  /** What is still open, by kind, for RUN_FINISHED's check (nothing may be). */
  stillOpen(): Array<[string, Iterable<string>]> {
    const openSteps: string[] = [];
    for (const [owner, names] of this.#steps ?? NONE_OPEN) {
      for (const name of names) {
        openSteps.push(owner === PARENT ? name : `${name} (subagent '${owner}')`);
      }
    }
    return [
      ["steps", openSteps],
      ["text messages", this.#activeMessages ?? NONE_OPEN],
      ["reasoning messages", this.#activeReasoning ?? NONE_OPEN],
      ["reasoning spans", this.#activeSpans ?? NONE_OPEN],
      ["tool calls", this.#activeToolCalls ?? NONE_OPEN],
      ["subagents", this.#activeSubagents ?? NONE_OPEN],
    ];
  }

  /** Opens a message or reasoning message; refuses one already open. */
  open(
    bucket: "message" | "reasoning",
    active: Set<string>,
    event: EventRecord,
    kind: string,
    closer: string,
  ): void {
    const id = event.messageId as string;
    if (active.has(id)) {
      throw new VerifyError(
        bucket === "message" ? "text-message" : "reasoning",
        `Cannot send '${event.type}' event: A ${kind} with ID '${id}' is already in progress. Complete it with '${closer}' first.`,
      );
    }
    const owners = this.owners[bucket];
    const existing = owners.get(id);
    if (existing !== undefined) {
      checkAttribution(event.type, event, existing, bucket === "message" ? "message" : kind, id);
    } else {
      owners.set(id, ownerOf(str(event.subagentRunId)));
    }
    active.add(id);
  }

  /** Continues (or with `closes`, ends) an open message or reasoning message. */
  continue(
    bucket: "message" | "reasoning",
    active: Set<string>,
    event: EventRecord,
    missing: string,
    closes: boolean,
    rule: FaultRule,
  ): void {
    const id = event.messageId as string;
    if (!active.has(id)) {
      throw new VerifyError(rule, `Cannot send '${event.type}' event: ${missing}`);
    }
    if (event.subagentRunId !== undefined) {
      const kind = bucket === "message" ? "message" : "reasoning message";
      checkAttribution(event.type, event, this.owners[bucket].get(id), kind, id);
    }
    if (closes) active.delete(id);
  }
}

/** Refuses an event whose subagentRunId disagrees with the owner of what it continues. */
export function checkAttribution(
  type: string,
  event: EventRecord,
  owner: Owner | undefined,
  kind: string,
  id: string,
): void {
  const tag = event.subagentRunId;
  if (tag === undefined || owner === undefined || owner === tag) return;
  throw new VerifyError(
    "attribution",
    `Cannot send '${type}': subagentRunId '${String(tag)}' does not match the ${kind} '${id}' opener's subagent '${ownerLabel(owner)}'.`,
  );
}

import { readFileSync } from "node:fs";
import type { RunAgentInput } from "@ag-ui/core";
import { type AdapterRunContext, type AgentAdapter, isAborted, sleep } from "./types.js";

/** A script: a file path, a bare event array, or an object with a `stream` array. */
export type ScriptSource = string | unknown[] | { stream: unknown[] };

export interface ScriptedOptions {
  script?: ScriptSource;
  /** One script per start of the run: the first start plays segments[0], each resume the next. */
  segments?: ScriptSource[];
  delayMs?: number;
}

/** Events that name the run itself; their ids are rewritten to the input's. */
const RUN_SCOPED = new Set(["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR"]);

/**
 * Replays recorded AG-UI events (the conformance corpus format included), so any recorded
 * stream plays on any thread. Scripts are read at start-up: a missing or unparseable file
 * fails start-up, not a run.
 */
export class ScriptedAdapter implements AgentAdapter {
  private readonly segments: unknown[][];
  private readonly delayMs: number;

  constructor(options: ScriptedOptions) {
    const sources = options.segments ?? (options.script !== undefined ? [options.script] : []);
    if (sources.length === 0) throw new Error("scripted adapter needs `script` or `segments`");
    this.segments = sources.map(loadScript);
    this.delayMs = options.delayMs ?? 0;
  }

  async *run(input: RunAgentInput, context: AdapterRunContext): AsyncIterable<unknown> {
    const script = this.segments[Math.min(context.segment, this.segments.length - 1)] ?? [];
    for (const event of script) {
      if (this.delayMs > 0) await sleep(this.delayMs, context.signal);
      if (isAborted(context.signal)) return;
      yield rewriteIds(event, input);
    }
  }
}

function rewriteIds(event: unknown, input: RunAgentInput): unknown {
  if (typeof event !== "object" || event === null) return event;
  const type = (event as { type?: unknown }).type;
  if (typeof type !== "string" || !RUN_SCOPED.has(type)) return event;
  const copy: Record<string, unknown> = { ...(event as Record<string, unknown>) };
  if ("threadId" in copy || type !== "RUN_ERROR") copy.threadId = input.threadId;
  if ("runId" in copy || type !== "RUN_ERROR") copy.runId = input.runId;
  return copy;
}

export function loadScript(source: ScriptSource): unknown[] {
  let value: unknown = source;
  if (typeof source === "string") {
    let text: string;
    try {
      text = readFileSync(source, "utf8");
    } catch (err) {
      throw new Error(`cannot read script ${source}: ${(err as Error).message}`);
    }
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new Error(`script ${source} is not valid JSON: ${(err as Error).message}`);
    }
  }
  if (Array.isArray(value)) return value;
  if (
    typeof value === "object" &&
    value !== null &&
    Array.isArray((value as { stream?: unknown }).stream)
  ) {
    return (value as { stream: unknown[] }).stream;
  }
  const where = typeof source === "string" ? `script ${source}` : "inline script";
  throw new Error(`${where} must be an array of events or an object with a "stream" array`);
}

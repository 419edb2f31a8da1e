import type { Interrupt } from "@ag-ui/core";
import type { RunRecord } from "../storage/types.js";
import type { EndFrames } from "./run-engine/end-waiters.js";
import type { RunEngine } from "./run-engine.js";

/** What run creation needs to know of an agent: its id and its descriptor's validators. */
export interface RunnableAgent {
  agentId: string;
  /** Each returns null when valid, else a message naming the failing path. */
  validateInput(data: unknown): string | null;
  validateConfig(data: unknown): string | null;
  validateResume(interruptType: string, data: unknown): string | null;
  /** Pending runs (executing or queued) beyond which new runs are refused with 429. */
  maxPendingRuns?: number;
  /** Stream modes the descriptor declares (`specs.capabilities.streaming`). */
  streamModes?: ReadonlySet<string>;
}

export interface AgentCatalog {
  get(agentId: string): RunnableAgent | undefined;
  /** The only agent, when exactly one is configured. */
  defaultAgent(): RunnableAgent | null;
}

export interface RunServiceOptions {
  engine: RunEngine;
  catalog: AgentCatalog;
  validateResumeEntry(entry: unknown): string | null;
  /** A payload against an interrupt's own `responseSchema` (see response-schemas.ts). */
  validateResponse?(interrupt: Interrupt, payload: unknown, at: string): string | null;
  /** Throws (or rejects with) a 422 domain error when a webhook URL may not be used. */
  checkWebhook(url: string): void | Promise<void>;
}

/** A run just created, and for a `wait`, its end as recorded when it executes here. */
export interface CreatedRun {
  run: RunRecord;
  ended?: Promise<RunRecord | undefined>;
  /** Filled, when `ended` resolves with the run, if its end's commit wrote all its frames. */
  endFrames?: EndFrames;
}

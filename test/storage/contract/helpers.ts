import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, expect } from "vitest";
import type {
  AcpMessage,
  InsertClaim,
  NewRun,
  RunFrame,
  RunRecord,
  Storage,
  ThreadRecord,
} from "../../../src/storage/types.js";
import { DomainError, type DomainErrorCode } from "../../../src/util/errors.js";

export type StorageFactory = () => Promise<Storage>;

/** Holds the storage of the running test: a fresh, opened, empty one per test. */
export interface StorageContext {
  storage: Storage;
}

export function useStorage(factory: StorageFactory): StorageContext {
  const context = {} as StorageContext;
  beforeEach(async () => {
    context.storage = await factory();
  });
  afterEach(async () => {
    await context.storage.close();
  });
  return context;
}

export const PAST = "2000-01-01T00:00:00.000Z";
export const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Lets the clock move on so that records created next have a later `created_at`. */
export const tick = () => sleep(3);

export const id = () => randomUUID();

export const inMs = (ms: number, from: Date = new Date()) => new Date(from.getTime() + ms);

export async function expectDomainError(
  promise: Promise<unknown>,
  code: DomainErrorCode,
): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a ${code} DomainError`).toBeInstanceOf(DomainError);
  expect((err as DomainError).code).toBe(code);
}

export async function makeThread(
  storage: Storage,
  metadata: Record<string, unknown> = {},
  hidden = false,
): Promise<ThreadRecord> {
  const { thread } = await storage.createThread({
    thread_id: id(),
    metadata,
    hidden,
    if_exists: "raise",
  });
  return thread;
}

/** A new run's record for `insertRun`: a stateful run of agent-a, due already. */
/** A replica's claim on a run it inserts, taken now, with its first segment open. */
export function claimFor(owner: string, leaseMs = 30_000): InsertClaim {
  const now = new Date();
  return {
    owner,
    leaseMs,
    now,
    segment: { agui_run_id: id(), started_at: now.toISOString(), ended_at: null },
  };
}

/** A frame whose data says its seq. */
export const seqFrame = (
  runId: string,
  seq: number,
  mode: RunFrame["mode"] = "custom",
): RunFrame => ({
  run_id: runId,
  seq,
  mode,
  data: JSON.stringify({ seq }),
});

export function newRun(threadId: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    run_id: id(),
    thread_id: threadId,
    agent_id: "agent-a",
    kind: "stateful",
    creation: { input: { messages: [] } },
    metadata: {},
    start_after: PAST,
    ...overrides,
  };
}

export async function makeRun(
  storage: Storage,
  threadId: string,
  overrides: Partial<NewRun> = {},
  rejectIfBusy = false,
): Promise<RunRecord> {
  return storage.insertRun(newRun(threadId, overrides), { reject_if_busy: rejectIfBusy });
}

export function messages(...texts: string[]): AcpMessage[] {
  return texts.map((text, index) => ({
    role: index % 2 === 0 ? "user" : "assistant",
    content: [{ type: "text", text }],
    id: `m${index}`,
  }));
}

/** Awkward JSON: nesting, nulls, arrays, unicode, numbers at the edges, keys that look special. */
export function trickyJson(): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify({
      zeta: 1,
      alpha: { nested: { deeper: [1, "two", null, { three: true }] }, empty: {} },
      nothing: null,
      list: [[], [[]], {}, ""],
      unicode: 'héllo wörld — 你好 🌍 \u2028 \u0000 \ud800 lone surrogate "quoted" \\ back',
      numbers: [0, -1, 1.5, 1e-7, 9007199254740991, -0.25],
      "a.b": "dotted",
      "it's": "apostrophe",
      '"q"': "quotes",
      "": "empty key",
    }),
  ) as Record<string, unknown>;
}

import type { NewCheckpoint } from "../types.js";
import { toJson } from "./json.js";
import { packJson, unpackJson } from "./packed-json.js";

/**
 * A run's output that holds its thread's state (`{type: "result", values, messages, …}`, every
 * stateful run's success) repeats the checkpoint written with it in the same commit: a trivial
 * run's 0.3 KB, and a long conversation's whole history at every run. Stored on SQLite as a
 * BLOB of the format byte, the checkpoint's seq (LEB128) and the output's JSON text with
 * `values` and `messages` as 0 (kept in their place, so the output reads back with its keys in
 * the same order), and rebuilt on read from the checkpoint.
 *
 * A checkpoint is deleted while its run stays (the thread deleted, retention keeping only a
 * thread's newest checkpoint, a rollback): a trigger (migration 018) first writes the run's
 * output whole again, through `acp_output_with_state`.
 */
const OF_CHECKPOINT_STATE = 0x04;

/**
 * Whether run `runId`'s output and the checkpoint written with it share their state, values and
 * messages. The checkpoint must name the run (`metadata.run_id`, as the engine's do): that is
 * how the trigger of its deletion finds the run.
 */
export function sharesState(
  runId: string,
  output: unknown,
  checkpoint: NewCheckpoint | undefined,
): boolean {
  if (checkpoint === undefined || output === null || typeof output !== "object") return false;
  if (checkpoint.metadata?.run_id !== runId) return false;
  const { values, messages } = output as Record<string, unknown>;
  if (values === undefined || messages === undefined) return false;
  // The engine builds both from the same objects: identity is the cheap and certain test.
  return values === checkpoint.values && messages === checkpoint.messages;
}

/** The column value of an output whose state is checkpoint `seq`'s. */
export function outputOfCheckpoint(output: Record<string, unknown>, seq: number): Buffer {
  const rest = toJson({ ...output, values: 0, messages: 0 });
  const header: number[] = [OF_CHECKPOINT_STATE];
  for (let n = seq; ; n = Math.floor(n / 128)) {
    if (n < 128) {
      header.push(n);
      break;
    }
    header.push((n % 128) | 128);
  }
  const stored = Buffer.allocUnsafe(header.length + Buffer.byteLength(rest));
  stored.set(header, 0);
  stored.write(rest, header.length, "utf8");
  return stored;
}

/** The checkpoint seq a stored output takes its state from, or null for any other value. */
export function checkpointSeqOf(stored: unknown): number | null {
  return headerOf(stored)?.seq ?? null;
}

function headerOf(stored: unknown): { seq: number; start: number } | null {
  if (!Buffer.isBuffer(stored) || stored[0] !== OF_CHECKPOINT_STATE) return null;
  let seq = 0;
  for (let at = 1, scale = 1; at < stored.length && at < 9; at++, scale *= 128) {
    seq += (stored[at]! & 127) * scale;
    if (stored[at]! < 128) return { seq, start: at + 1 };
  }
  return null;
}

/** A checkpoint's stored state: JSON text or packed (packed-json.ts). */
export interface StoredState {
  values: string | Buffer;
  messages: string | Buffer;
}

/**
 * The output a stored value holds, with its state read by `stateOf` when it is a checkpoint's;
 * undefined when the value is in another format (the caller unpacks it).
 */
export function outputWithState(
  stored: string | Buffer,
  stateOf: (seq: number) => StoredState | undefined,
): Record<string, unknown> | undefined {
  const header = headerOf(stored);
  if (header === null) return undefined;
  const state = stateOf(header.seq);
  if (state === undefined) {
    throw new Error(`a run's output refers to checkpoint ${header.seq}, which is missing`);
  }
  const output = JSON.parse((stored as Buffer).toString("utf8", header.start)) as Record<
    string,
    unknown
  >;
  output.values = unpackJson(state.values);
  output.messages = unpackJson(state.messages);
  return output;
}

/**
 * `acp_output_with_state(output, values, messages)`, for the trigger of a deleted checkpoint:
 * the output whole again, as a column value (JSON text, or packed when long).
 */
export function sqlOutputWithState(
  stored: string | Buffer,
  values: string | Buffer,
  messages: string | Buffer,
): string | Buffer {
  const output = outputWithState(stored, () => ({ values, messages }));
  return output === undefined ? stored : packJson(output);
}

/**
 * Bounds on the shape of what an agent sends: how deep an event nests, and how deep and how
 * large the state its snapshots and patches build. Everything downstream (JSON.stringify for
 * storage and streams, structured clones, the schema checks) recurses once per level and
 * fails with "Maximum call stack size exceeded" a few thousand levels down; a bounded depth
 * keeps that from ever happening, and the fault names the agent's value instead.
 *
 * Sizes are the length of the value's JSON text, estimated without building it (a string
 * counts its characters plus quotes, escapes aside; a number counts its digits).
 */

export interface ShapeBounds {
  /** Largest state, as JSON; 0 = no limit. */
  maxStateBytes: number;
  /** Deepest nesting of objects and arrays in one event, and in the state. */
  maxEventDepth: number;
  /** Where each limit is set, named in faults. */
  keys: { maxStateBytes: string; maxEventDepth: string };
}

/** The agent's value broke a shape bound; `message` follows "event N (TYPE): ". */
export class ShapeError extends Error {
  override readonly name = "ShapeError";
  constructor(
    readonly rule: "event-depth" | "state-depth" | "state-size" | "messages-size",
    message: string,
  ) {
    super(message);
  }
}

type Rec = Record<string, unknown>;

/**
 * The path to the first container nested deeper than `max` levels (the top object is level
 * 1), or undefined. Recurses at most `max` levels.
 */
export function deeperThan(value: unknown, max: number): string[] | undefined {
  return deeper(value, max, 1);
}

function deeper(value: unknown, max: number, level: number): string[] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  if (level > max) return [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (typeof item !== "object" || item === null) continue;
      const at = deeper(item, max, level + 1);
      if (at) {
        at.unshift(String(i));
        return at;
      }
    }
    return undefined;
  }
  for (const key in value) {
    const item = (value as Rec)[key];
    if (typeof item !== "object" || item === null) continue;
    const at = deeper(item, max, level + 1);
    if (at) {
      at.unshift(key);
      return at;
    }
  }
  return undefined;
}

/** Levels of nesting of a value: 0 for a scalar, 1 for `{}`. Recurses at most `cap` levels. */
export function depthOf(value: unknown, cap: number): number {
  if (typeof value !== "object" || value === null) return 0;
  if (cap <= 0) return 1;
  let most = 0;
  const items = Array.isArray(value) ? value : Object.values(value as Rec);
  for (const item of items) {
    if (typeof item !== "object" || item === null) continue;
    const d = depthOf(item, cap - 1);
    if (d > most) most = d;
    if (most >= cap) break;
  }
  return most + 1;
}

/** The length of `value`'s JSON text, estimated; stops counting once past `stopAbove`. */
export function jsonSize(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case "string":
        size += v.length + 2;
        break;
      case "number":
        size += Number.isInteger(v) && Math.abs(v) < 1e9 ? String(v).length : 24;
        break;
      case "boolean":
        size += v ? 4 : 5;
        break;
      case "object":
        if (v === null) {
          size += 4;
        } else if (Array.isArray(v)) {
          size += 2 + v.length;
          for (const item of v) stack.push(item);
        } else {
          size += 2;
          for (const key in v) {
            size += key.length + 4;
            stack.push((v as Rec)[key]);
          }
        }
        break;
      default:
        break;
    }
    if (size > stopAbove) return size;
  }
  return size;
}

/** A JSON pointer as a message shows it: escaped, and cut when long. */
export function showPath(tokens: readonly string[]): string {
  const text = `/${tokens.map((t) => t.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/**
 * Keeps the state within its bounds as snapshots and patches replace it. The size is known
 * exactly after a snapshot and estimated after patches (what they add, never what they
 * remove); it is measured again once the estimate passes the limit and the patches since the
 * last measure add up to a sixteenth of it, so a state near its limit is not walked for every
 * small patch (a state can pass its limit by that sixteenth, plus one event, before its run is
 * stopped).
 */
export class StateBounds {
  private measured: number;
  private pending = 0;
  private depth: number;
  /** What this run added to the messages since they were last replaced whole. */
  private messagesAdded = 0;

  constructor(
    private readonly bounds: ShapeBounds,
    initial: unknown,
  ) {
    this.measured = bounds.maxStateBytes > 0 ? jsonSize(initial) : 0;
    this.depth = depthOf(initial, bounds.maxEventDepth + 1);
  }

  /** Throws a {@link ShapeError} when `snapshot` may not become the state. */
  snapshot(snapshot: unknown): void {
    const { maxStateBytes } = this.bounds;
    // The event's own depth check has bounded the snapshot's depth already.
    this.depth = depthOf(snapshot, this.bounds.maxEventDepth + 1);
    if (maxStateBytes <= 0) return;
    const size = jsonSize(snapshot, maxStateBytes);
    if (size > maxStateBytes) throw this.tooLarge("the snapshot");
    this.measured = size;
    this.pending = 0;
  }

  /** Throws a {@link ShapeError} when the state `patch` made, `next`, may not be kept. */
  delta(patch: readonly unknown[], next: unknown): void {
    const { maxStateBytes, maxEventDepth } = this.bounds;
    let reach = this.depth;
    let added = 0;
    for (const raw of patch) {
      const op = raw as { op?: unknown; path?: unknown; value?: unknown };
      const path = typeof op.path === "string" ? op.path : "";
      const levels = path === "" ? 0 : path.split("/").length - 1;
      // copy and move carry a part of the state itself: at most as deep as the state.
      const carried =
        op.op === "copy" || op.op === "move" ? this.depth : depthOf(op.value, maxEventDepth + 1);
      if (levels + carried > reach) reach = levels + carried;
      if (maxStateBytes > 0) {
        added +=
          path.length +
          (op.op === "copy" ? this.measured : op.value === undefined ? 0 : jsonSize(op.value));
      }
    }
    if (reach > maxEventDepth) {
      const at = deeperThan(next, maxEventDepth);
      if (at) {
        throw new ShapeError(
          "state-depth",
          `the patch makes the state nested deeper than ${maxEventDepth} levels, at ${showPath(at)} (${this.bounds.keys.maxEventDepth})`,
        );
      }
      reach = depthOf(next, maxEventDepth + 1);
    }
    this.depth = reach;
    if (maxStateBytes <= 0) return;
    this.pending += added;
    if (this.measured + this.pending > maxStateBytes && this.pending > maxStateBytes / 16) {
      const size = jsonSize(next, maxStateBytes);
      if (size > maxStateBytes) throw this.tooLarge("the patched state");
      this.measured = size;
      this.pending = 0;
    }
  }

  /**
   * Throws a {@link ShapeError} when a patch made a document other than the state (an
   * activity message's content) nest too deep. The document was within the bound before.
   */
  document(patch: readonly unknown[], next: unknown, what: string): void {
    const { maxEventDepth } = this.bounds;
    let reach = 0;
    for (const raw of patch) {
      const op = raw as { op?: unknown; path?: unknown; value?: unknown };
      const path = typeof op.path === "string" ? op.path : "";
      const levels = path === "" ? 0 : path.split("/").length - 1;
      const carried =
        op.op === "copy" || op.op === "move" ? maxEventDepth : depthOf(op.value, maxEventDepth);
      if (levels + carried > reach) reach = levels + carried;
    }
    if (reach <= maxEventDepth) return;
    const at = deeperThan(next, maxEventDepth);
    if (at) {
      throw new ShapeError(
        "state-depth",
        `the patch makes ${what} nested deeper than ${maxEventDepth} levels, at ${showPath(at)} (${this.bounds.keys.maxEventDepth})`,
      );
    }
  }

  /**
   * The run's events add `bytes` to the messages (text, tool-call arguments and results,
   * activity content). Only what this run adds counts: a long thread's history is not the
   * agent's doing. Throws a {@link ShapeError} past `maxStateBytes`.
   */
  messagesGrow(bytes: number): void {
    const { maxStateBytes, keys } = this.bounds;
    if (maxStateBytes <= 0) return;
    this.messagesAdded += bytes;
    if (this.messagesAdded > maxStateBytes) {
      throw new ShapeError(
        "messages-size",
        `the messages this run added would be larger than ${formatSize(maxStateBytes)} as JSON, the most a run's state may be (${keys.maxStateBytes})`,
      );
    }
  }

  /** A MESSAGES_SNAPSHOT replaced the messages (the snapshot itself is one bounded event). */
  messagesReplaced(): void {
    this.messagesAdded = 0;
  }

  private tooLarge(what: string): ShapeError {
    const { maxStateBytes, keys } = this.bounds;
    return new ShapeError(
      "state-size",
      `${what} would be larger than ${formatSize(maxStateBytes)} as JSON, the most a run's state may be (${keys.maxStateBytes})`,
    );
  }
}

function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

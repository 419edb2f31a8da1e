/** How long an adapter gets to stop on its own once its signal aborted. */
const ABANDON_AFTER_MS = 250;

/**
 * Watches `signal` for `stopsAt`, and is the only code here that touches it (once). The
 * iterators read the gate instead: on Node 20 every AbortSignal has a hidden class of its own,
 * so optimized code that reads one per event is thrown away when it meets the next run's signal
 * and compiled again (the executor's loop, which inlines the whole pipeline, was recompiled at
 * each of a server's first runs).
 */
export function abortGate(signal: AbortSignal, graceMs = ABANDON_AFTER_MS): AbortGate {
  const gate: AbortGate = {
    aborted: signal.aborted,
    reason: signal.reason,
    graceMs,
    iterators: new Set(),
  };
  if (!gate.aborted) {
    // One listener for the whole stream, not one per event: the adapter may yield millions.
    signal.addEventListener(
      "abort",
      () => {
        gate.aborted = true;
        gate.reason = signal.reason;
        for (const abort of gate.iterators) abort();
      },
      { once: true },
    );
  }
  return gate;
}

/** A signal's state, as the iterators of `stopsAt` read it. */
export interface AbortGate {
  aborted: boolean;
  reason: unknown;
  graceMs: number;
  /** Each iterator's reaction to the abort. */
  iterators: Set<() => void>;
}

/**
 * An adapter's events that stop when the gate's signal aborts, even if the adapter ignores the
 * signal and never yields again. Without this a hung agent would hold its run, its concurrency
 * slot and the server's shutdown forever: a `for await` cannot leave an iterator stuck in
 * `next()`.
 *
 * A well-behaved adapter is not cut short: after the abort it still gets `graceMs` to settle
 * and is then closed (`return()`), so its `finally` runs before the engine records the end.
 * One that is still stuck after that is left behind with a `return()` request it will see if
 * it ever yields again.
 */
export function stopsAt<T>(source: AsyncIterable<T>, gate: AbortGate): AsyncIterable<T> {
  return new Stopping(source, gate);
}

// Classes rather than closures: the executor's loop calls these methods per run on new
// objects, and a closure made per run is a new call target each time for optimized code.
class Stopping<T> implements AsyncIterable<T> {
  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly gate: AbortGate,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return new StoppingIterator(this.source[Symbol.asyncIterator](), this.gate);
  }
}

class StoppingIterator<T> implements AsyncIterator<T> {
  private waiting: Waiting<T> | null = null;

  constructor(
    private readonly iterator: AsyncIterator<T>,
    private readonly gate: AbortGate,
  ) {
    gate.iterators.add(() => {
      const current = this.waiting;
      this.waiting = null;
      if (current) this.fail(current, gate.reason);
    });
  }

  // Not an `async` method: per event that would add a promise and a turn of the microtask
  // queue around the one below, and a fast adapter yields millions.
  next(): Promise<IteratorResult<T>> {
    const { gate, iterator } = this;
    if (gate.aborted) {
      return settlesWithin(closeQuietly(iterator), gate.graceMs).then(() => {
        throw gate.reason;
      });
    }
    const next = iterator.next();
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      const entry: Waiting<T> = { next, reject };
      this.waiting = entry;
      next.then(
        (result) => {
          if (this.waiting !== entry) return;
          this.waiting = null;
          resolve(result);
        },
        (err: unknown) => {
          if (this.waiting !== entry) return;
          this.waiting = null;
          this.fail(entry, err);
        },
      );
    });
  }

  async return(value?: unknown): Promise<IteratorResult<T>> {
    await settlesWithin(closeQuietly(this.iterator), this.gate.graceMs);
    return { done: true, value: value as T };
  }

  /** After an abort the adapter is closed (or left behind) before the caller hears. */
  private fail(entry: Waiting<T>, err: unknown): void {
    if (!this.gate.aborted) {
      entry.reject(err);
      return;
    }
    void leave(this.iterator, entry.next, this.gate.graceMs).then(() => entry.reject(err));
  }
}

/** A `next()` waiting for the adapter's: rejected by the adapter's error or by the abort. */
interface Waiting<T> {
  next: Promise<IteratorResult<T>>;
  reject(reason: unknown): void;
}

/** After an abort: close the adapter if it settles in time, else leave it behind. */
async function leave<T>(
  iterator: AsyncIterator<T>,
  next: Promise<IteratorResult<T>>,
  graceMs: number,
): Promise<void> {
  const settled = next.then(
    (result) => result,
    () => ({ done: true, value: undefined }) as IteratorResult<T>,
  );
  if (!(await settlesWithin(settled, graceMs))) {
    void closeQuietly(iterator);
    return;
  }
  if (!(await settled).done) await settlesWithin(closeQuietly(iterator), graceMs);
}

async function closeQuietly<T>(iterator: AsyncIterator<T>): Promise<void> {
  try {
    await iterator.return?.();
  } catch {
    // The adapter failed while closing: the run's outcome is already decided.
  }
}

/** True when `promise` settles within `ms`. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

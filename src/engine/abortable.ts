/** How long an adapter gets to stop on its own once its signal aborted. */
const ABANDON_AFTER_MS = 250;

/**
 * An adapter's events that stop when `signal` aborts, even if the adapter ignores the signal
 * and never yields again. Without this a hung agent would hold its run, its concurrency slot
 * and the server's shutdown forever: a `for await` cannot leave an iterator stuck in `next()`.
 *
 * A well-behaved adapter is not cut short: after the abort it still gets `graceMs` to settle
 * and is then closed (`return()`), so its `finally` runs before the engine records the end.
 * One that is still stuck after that is left behind with a `return()` request it will see if
 * it ever yields again.
 */
export function untilAborted<T>(
  source: AsyncIterable<T>,
  signal: AbortSignal,
  graceMs = ABANDON_AFTER_MS,
): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const iterator = source[Symbol.asyncIterator]();
      // One listener for the whole stream, not one per event: the adapter may yield millions.
      let waiting: Waiting<T> | null = null;
      // After an abort the adapter is closed (or left behind) before the caller hears.
      const fail = (entry: Waiting<T>, err: unknown) => {
        if (signal.aborted) void leave(iterator, entry.next, graceMs).then(() => entry.reject(err));
        else entry.reject(err);
      };
      signal.addEventListener(
        "abort",
        () => {
          const current = waiting;
          waiting = null;
          if (current) fail(current, signal.reason);
        },
        { once: true },
      );
      return {
        // Not an `async` function: per event that would add a promise and a turn of the
        // microtask queue around the one below, and a fast adapter yields millions.
        next(): Promise<IteratorResult<T>> {
          if (signal.aborted) {
            return settlesWithin(closeQuietly(iterator), graceMs).then(() => {
              throw signal.reason;
            });
          }
          const next = iterator.next();
          return new Promise<IteratorResult<T>>((resolve, reject) => {
            const entry: Waiting<T> = { next, reject };
            waiting = entry;
            next.then(
              (result) => {
                if (waiting !== entry) return;
                waiting = null;
                resolve(result);
              },
              (err: unknown) => {
                if (waiting !== entry) return;
                waiting = null;
                fail(entry, err);
              },
            );
          });
        },
        async return(value?: unknown) {
          await settlesWithin(closeQuietly(iterator), graceMs);
          return { done: true, value: value as T };
        },
      };
    },
  };
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

/**
 * An rxjs-style Observable (what an @ag-ui/client agent's `run` returns) as an AsyncIterable,
 * without importing rxjs: anything with `subscribe({next, error, complete})` returning
 * something with `unsubscribe()` will do.
 */

export interface ObserverLike<T> {
  next(value: T): void;
  error(error: unknown): void;
  complete(): void;
}

export interface ObservableLike<T> {
  subscribe(observer: ObserverLike<T>): { unsubscribe(): void } | undefined;
}

export function isObservableLike(value: unknown): value is ObservableLike<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { subscribe?: unknown }).subscribe === "function"
  );
}

/** Events an Observable may get ahead of its consumer before the run fails. */
export const DEFAULT_MAX_BUFFERED_EVENTS = 10_000;

/**
 * Iterates an Observable's values. An Observable cannot be paused, so values it emits faster
 * than they are consumed wait in a buffer bounded by `maxBuffered`; past that the iteration
 * throws rather than drop events or grow without limit. The subscription ends (its teardown
 * runs) when the signal aborts, when the consumer stops early, or on overflow; an Observable
 * error is thrown after the values that preceded it.
 */
export async function* fromObservable<T>(
  observable: ObservableLike<T>,
  signal: AbortSignal,
  maxBuffered = DEFAULT_MAX_BUFFERED_EVENTS,
): AsyncGenerator<T, void, undefined> {
  const buffer: T[] = [];
  let head = 0;
  let ended = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };

  let subscription: { unsubscribe(): void } | undefined;
  const stop = () => {
    const current = subscription;
    subscription = undefined;
    current?.unsubscribe();
  };

  const onAbort = () => notify();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    if (signal.aborted) return;
    // A synchronous Observable emits (and may complete) inside this call.
    subscription =
      observable.subscribe({
        next: (value) => {
          if (ended) return;
          if (buffer.length - head >= maxBuffered) {
            failure = {
              error: new Error(
                `the agent emitted more than ${maxBuffered} events ahead of the server consuming them`,
              ),
            };
            ended = true;
            stop();
          } else {
            buffer.push(value);
          }
          notify();
        },
        error: (error) => {
          if (ended) return;
          failure = { error };
          ended = true;
          notify();
        },
        complete: () => {
          ended = true;
          notify();
        },
      }) ?? undefined;
    if (ended && failure) stop();

    while (!signal.aborted) {
      if (head < buffer.length) {
        const value = buffer[head] as T;
        buffer[head++] = undefined as T;
        if (head > 1024 && head * 2 > buffer.length) {
          buffer.splice(0, head);
          head = 0;
        }
        yield value;
        continue;
      }
      if (failure) throw failure.error;
      if (ended) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    stop();
  }
}

/**
 * An AbortController whose AbortSignal is made only when someone asks for one. Creating an
 * AbortSignal (an EventTarget) cost about 1 % of the server's CPU per signal made for every run;
 * a run executing here (its cancel, time limit, lost claim, shutdown) and a client waiting for
 * a run's end are watched through `onAbort` instead, and a signal is made only for code that
 * needs one (the adapter gets a signal of its own anyway, see executeSegment).
 */
export class LazyAbortController {
  aborted = false;
  reason: unknown = undefined;
  #listeners: Array<() => void> = [];
  #controller: AbortController | undefined;

  /** Stops the run with `reason` (the first abort wins, as for an AbortController). */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = [];
    this.#controller?.abort(reason);
    for (const listener of listeners) listener();
  }

  /**
   * Calls `listener` once when the run is aborted (not when it is aborted already: check
   * `aborted` first). Returns what stops listening.
   */
  onAbort(listener: () => void): () => void {
    if (this.aborted) return noop;
    this.#listeners.push(listener);
    return () => {
      const at = this.#listeners.indexOf(listener);
      if (at >= 0) this.#listeners.splice(at, 1);
    };
  }

  /** An AbortSignal that follows this, for code that needs one. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.reason);
    }
    return this.#controller.signal;
  }
}

function noop(): void {}

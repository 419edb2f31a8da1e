/**
 * Reads of the same thing asked for while one is under way, answered by one statement.
 *
 * Every `wait` run counts its agent's queue before it executes (its insert is held, so the
 * count cannot ride in it: see `Storage.insertRunHeld`). Under load dozens of runs ask for the
 * same count within one round trip, and each count was a statement of its own: a round trip, a
 * transaction and a parse on both ends, the largest part of a run's PostgreSQL cost beside its
 * one write.
 *
 * A caller never gets an answer older than its call: while a read is under way, callers of the
 * same key wait for the next one, which starts once that read is answered and serves all of
 * them. Each caller therefore sees the database as it was at some moment after it asked, which
 * is what a read of its own would have given it (a caller's count was never a reservation:
 * concurrent callers each counted the same runs and all went ahead). A read that fails fails
 * every caller that shared it.
 */
export class SharedReads<T> {
  /** Per key: the read under way. */
  readonly #running = new Map<string, Promise<T>>();
  /** Per key: the read that starts once the one under way is answered, and its callers. */
  readonly #next = new Map<string, Promise<T>>();

  /** `read()`'s answer, or that of a read of `key` started after this call. */
  get(key: string, read: () => Promise<T>): Promise<T> {
    const running = this.#running.get(key);
    if (running === undefined) return this.#start(key, read);
    let next = this.#next.get(key);
    if (next === undefined) {
      const after = () => {
        this.#next.delete(key);
        return this.#start(key, read);
      };
      next = running.then(after, after);
      this.#next.set(key, next);
    }
    return next;
  }

  #start(key: string, read: () => Promise<T>): Promise<T> {
    let started: Promise<T>;
    try {
      started = read();
    } catch (err) {
      started = Promise.reject(err);
    }
    this.#running.set(key, started);
    const done = () => {
      if (this.#running.get(key) === started) this.#running.delete(key);
    };
    started.then(done, done);
    return started;
  }
}

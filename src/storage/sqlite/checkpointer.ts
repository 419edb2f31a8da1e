import { statSync } from "node:fs";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** Checkpoint when the WAL has grown past this (bytes); checked every CHECK_EVERY_MS. */
const WAL_LIMIT_BYTES = 4 * 1024 * 1024;
const CHECK_EVERY_MS = 200;
/** The worker starts once the WAL passes this size, looked at on a write at most every LOOK_MS. */
const START_AT_BYTES = 1024 * 1024;
const LOOK_MS = 250;
/**
 * The worker thread's nice value on Linux, where each thread has its own. A checkpoint copies
 * about 1,000 pages (some ms of CPU); on a server's only core it took that time from requests
 * in flight, which a lone client saw as its p99. At 10 it still gets a tenth of a busy core,
 * several times what checkpoints need at full load, and all of an idle one.
 */
const WORKER_NICE = 10;

/**
 * The worker's code, as a string: the server may run from TypeScript sources (tests) or from
 * dist/, and a worker given a file would need a JavaScript file next to this one in both.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { statSync } = require("node:fs");
const Database = require(workerData.driver);
if (workerData.nice !== 0) {
  try { require("node:os").setPriority(workerData.nice); } catch { /* not permitted: as it was */ }
}
const db = new Database(workerData.path);
db.pragma("busy_timeout = 5000");
db.pragma("journal_size_limit = " + workerData.limit);
const walSize = () => { try { return statSync(workerData.path + "-wal").size; } catch { return 0; } };
const timer = setInterval(() => {
  if (walSize() < workerData.limit) return;
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch (err) { parentPort.postMessage(String(err)); }
}, workerData.every);
parentPort.on("message", () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

/**
 * Copies the WAL back into the database file from a worker thread, so that no request waits
 * for it. SQLite's automatic checkpoint runs inside the commit that crosses its threshold:
 * about once every 30 stateless runs, that commit wrote ~1,000 pages into the database file
 * and waited for two fsyncs, some 10-15 ms here, which is where the 1-connection p99 went.
 *
 * PASSIVE checkpoints never block the server's connection (readers and the writer go on while
 * it copies). The connection's own automatic checkpoint stays on, at a higher threshold, as a
 * backstop should the worker fall behind or die. The worker starts only once the WAL has grown
 * past 1 MB, so a server at rest (or one that only reads) does not pay for a thread.
 */
export class WalCheckpointer {
  #worker: Worker | null = null;
  #lookedAt = 0;
  #exited: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly onError: (message: string) => void = () => {},
  ) {}

  /** Called on every write: now and then, looks whether the WAL has grown enough to start. */
  noteWrite(): void {
    if (this.#worker !== null) return;
    const now = Date.now();
    if (now - this.#lookedAt < LOOK_MS) return;
    this.#lookedAt = now;
    let size = 0;
    try {
      size = statSync(`${this.path}-wal`).size;
    } catch {
      return;
    }
    if (size >= START_AT_BYTES) this.start();
  }

  #failed = false;

  /**
   * Starts the worker if it is not running. Never throws: without it, the connection's own
   * automatic checkpoint still bounds the WAL (writes then wait for it, as before).
   */
  start(): void {
    if (this.#worker !== null || this.#failed) return;
    let worker: Worker;
    try {
      const driver = createRequire(import.meta.url).resolve("better-sqlite3");
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          path: this.path,
          driver,
          limit: WAL_LIMIT_BYTES,
          every: CHECK_EVERY_MS,
          // Elsewhere the call would lower the whole process's priority, not this thread's.
          nice: process.platform === "linux" ? WORKER_NICE : 0,
        },
      });
    } catch (err) {
      this.#failed = true;
      this.onError(`could not start the checkpoint worker: ${(err as Error).message}`);
      return;
    }
    // Never keeps the process alive on its own: the storage's close() stops it.
    worker.unref();
    worker.on("message", (message) => this.onError(String(message)));
    worker.on("error", (err) => {
      // Not restarted: the connection's own automatic checkpoint takes over.
      this.#failed = true;
      this.onError(`the checkpoint worker failed: ${err.message}`);
    });
    this.#exited = new Promise((resolve) => worker.once("exit", () => resolve()));
    this.#worker = worker;
  }

  /** Stops the worker and waits for it to close its connection. */
  async stop(): Promise<void> {
    const worker = this.#worker;
    if (worker === null) return;
    this.#worker = null;
    // Held open while it closes its connection: unref'd, the process could exit first.
    worker.ref();
    worker.postMessage("stop");
    const stopped = await Promise.race([
      this.#exited.then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 5000).unref()),
    ]);
    if (!stopped) await worker.terminate();
  }
}

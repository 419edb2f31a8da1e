import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import type { Logger } from "pino";
import {
  type CancelListener,
  type FrameBus,
  type FrameListener,
  LocalFrameBus,
} from "../../engine/frame-bus.js";
import type { RunFrame, Storage } from "../types.js";
import { connectionTarget } from "./connection-target.js";

/**
 * The frame bus of several replicas sharing one PostgreSQL: local listeners are called
 * directly, and every frame batch, cancel request and "new work" announcement is also sent as
 * a NOTIFY that the other replicas LISTEN to. A frame notification carries only the run id and
 * goes out once the frames are stored (`announceStored`), and a replica whose clients watch that run pokes
 * them to read what is new (see FrameBus: an empty list means "read storage").
 *
 * Channels are named after the schema, so deployments (and test runs) that share a database
 * in different schemas do not hear each other.
 */
export class PostgresFrameBus implements FrameBus {
  private readonly local = new LocalFrameBus();
  private readonly replica = randomUUID();
  private readonly channels: { frames: string; cancel: string; work: string };
  private readonly sender: pg.Pool;
  private listener: pg.Client | null = null;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** Notifications not sent yet, sent together (see notify). */
  private outbox: Array<[channel: string, payload: string]> = [];
  /** The batch on its way, if any: the next one waits for it. */
  private sending: Promise<void> | undefined;

  private constructor(
    private readonly url: string,
    schema: string,
    private readonly logger: Logger,
    private readonly storage: Pick<Storage, "takeWrittenOnce"> | undefined,
  ) {
    const prefix = `acp_${createHash("sha256").update(schema).digest("hex").slice(0, 12)}`;
    this.channels = {
      frames: `${prefix}_frames`,
      cancel: `${prefix}_cancel`,
      work: `${prefix}_work`,
    };
    // One batch at a time needs one connection.
    this.sender = new pg.Pool({ connectionString: url, max: 1 });
    this.sender.on("error", (err) => this.logger.warn({ err }, "bus sender connection failed"));
  }

  /**
   * Connects the LISTEN connection; resolves once notifications are being received. `storage`,
   * this replica's, tells which runs nobody can be following (see announceStored).
   */
  static async connect(
    databaseUrl: string,
    logger: Logger,
    storage?: Pick<Storage, "takeWrittenOnce">,
  ): Promise<PostgresFrameBus> {
    const target = connectionTarget(databaseUrl);
    const bus = new PostgresFrameBus(target.url, target.schema, logger, storage);
    await bus.listen();
    return bus;
  }

  publish(runId: string, frames: RunFrame[]): void {
    this.local.publish(runId, frames);
  }

  /**
   * A run written once, with its end (`Storage.takeWrittenOnce`), needs no notification: no
   * replica knew of it before that commit, so none has a client following it, and whoever
   * reads it from now on reads it whole from storage.
   */
  announceStored(runId: string): void {
    if (this.storage?.takeWrittenOnce?.(runId) === true) return;
    this.notify(this.channels.frames, runId);
  }

  subscribe(runId: string, listener: FrameListener): () => void {
    return this.local.subscribe(runId, listener);
  }

  listenerCount(): number {
    return this.local.listenerCount();
  }

  requestCancel(runId: string, action: "interrupt" | "rollback"): void {
    this.local.requestCancel(runId, action);
    this.notify(this.channels.cancel, `${runId}|${action}`);
  }

  onCancel(listener: CancelListener): void {
    this.local.onCancel(listener);
  }

  announceWork(): void {
    this.local.announceWork();
    this.notify(this.channels.work, "");
  }

  onWork(listener: () => void): void {
    this.local.onWork(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    // What was announced still goes out: the batch in flight, then what waited behind it.
    await this.sending;
    await this.send();
    clearTimeout(this.reconnectTimer);
    await this.listener?.end().catch(() => undefined);
    await this.sender.end().catch(() => undefined);
  }

  /**
   * Queues a notification. They go out as one statement (one round trip, one transaction) per
   * batch, one batch at a time: those of one turn of the event loop, and while a batch is on
   * its way, every one queued meanwhile, sent together as soon as it is answered. Under load a
   * statement carries several runs' notifications (a notification waits at most one round trip
   * more), and PostgreSQL delivers them all in the order they were queued.
   */
  private notify(channel: string, body: string): void {
    if (this.closed) return;
    this.outbox.push([channel, `${this.replica}|${body}`]);
    if (this.outbox.length === 1 && this.sending === undefined) {
      setImmediate(() => this.sendOutbox());
    }
  }

  private sendOutbox(): void {
    if (this.sending !== undefined || this.outbox.length === 0 || this.closed) return;
    this.sending = this.send().finally(() => {
      this.sending = undefined;
      this.sendOutbox();
    });
  }

  private async send(): Promise<void> {
    const batch = this.outbox;
    this.outbox = [];
    if (batch.length === 0) return;
    await this.sender
      .query({
        // Prepared once per connection: a notification goes out after most runs.
        name: "acp_notify",
        text: "SELECT pg_notify(n.channel, n.payload) FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS n(channel, payload, i) ORDER BY n.i",
        values: [batch.map(([channel]) => channel), batch.map(([, payload]) => payload)],
      })
      .catch((err) =>
        this.logger.warn(
          { err, notifications: batch.length },
          "could not notify the other replicas",
        ),
      );
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on("notification", (message) => this.receive(message.channel, message.payload ?? ""));
    client.on("error", (err) => {
      this.logger.warn({ err }, "bus listener connection lost; reconnecting");
      this.scheduleReconnect();
    });
    await client.connect();
    for (const channel of Object.values(this.channels)) await client.query(`LISTEN ${channel}`);
    this.listener = client;
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.listener = null;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.listen()
        .then(() => {
          // Whatever was announced while we were deaf: look for work, re-read watched runs.
          this.local.announceWork();
          this.local.pokeAll();
        })
        .catch(() => this.scheduleReconnect());
    }, 500);
  }

  private receive(channel: string, payload: string): void {
    const [from, runId = "", action] = payload.split("|");
    if (from === this.replica) return;
    if (channel === this.channels.frames) this.local.publish(runId, []);
    else if (channel === this.channels.cancel) {
      this.local.requestCancel(runId, action === "rollback" ? "rollback" : "interrupt");
    } else if (channel === this.channels.work) this.local.announceWork();
  }
}

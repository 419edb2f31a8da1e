import { ApiError, api, inspectorApi } from "./api";
import { changedPaths } from "./diff";
import {
  type Connection,
  type Entry,
  type FrameMode,
  makeEntry,
  modeOf,
  type StateVersion,
} from "./run-entry";
import { runOutcome } from "./runs";
import { readStream, type SseFrame } from "./sse";
import type { AcpMessage, RunInfo, StoredFrames } from "./types";

export type { Connection, Entry, FrameMode, StateVersion } from "./run-entry";

type Listener = () => void;

const sessions = new Map<string, RunSession>();

/**
 * Everything the inspector knows about one run: its frames in order, the state versions they
 * carry, its status and output; fed by a live ACP stream, by stored frames, or by a replay of
 * them. Views subscribe and re-render at most once per animation frame, so a stream of
 * thousands of events costs one render per frame, not one per event.
 */
export class RunSession {
  runId = "";
  threadId: string | null = null;
  kind: "stateful" | "stateless" = "stateless";
  agentId = "";
  info: RunInfo | null = null;
  entries: Entry[] = [];
  versions: StateVersion[] = [];
  status = "pending";
  output: Record<string, unknown> | null = null;
  connection: Connection = "connecting";
  error: string | null = null;
  /** True once a rollback deleted the run. */
  deleted = false;
  /** True when the server has no such run (for this caller): there is nothing to show. */
  missing = false;
  /** Subagent run id → its name (from SUBAGENT_STARTED). */
  lanes = new Map<string, string>();
  /** The request that started it (from this page), for display. */
  request: { method: string; path: string; body: unknown } | null = null;

  private readonly bySeq = new Map<number, Entry>();
  private readonly listeners = new Set<Listener>();
  private scheduled = false;
  private stream: AbortController | null = null;
  private replayTimer: ReturnType<typeof setInterval> | null = null;
  private rollingBack = false;
  private watchTimer: ReturnType<typeof setInterval> | null = null;

  /** The run's ACP path: `/threads/{t}/runs/{r}` or `/runs/{r}`. */
  get path(): string {
    return this.kind === "stateful" && this.threadId
      ? `/threads/${this.threadId}/runs/${this.runId}`
      : `/runs/${this.runId}`;
  }

  get lastSeq(): number {
    return this.entries.at(-1)?.seq ?? 0;
  }

  get latest(): StateVersion | undefined {
    return this.versions.at(-1);
  }

  /** The status as a person reads it: a cancelled run is `cancelled`, not `error`. */
  get outcome(): string {
    return runOutcome(this.status, this.output);
  }

  /** Open interrupts, by interrupt type, when the run is interrupted. */
  get interrupts(): Array<{ type: string; index: number; interrupt: Record<string, unknown> }> {
    if (this.status !== "interrupted" || this.output?.type !== "interrupt") return [];
    const byType = (this.output.interrupt ?? {}) as Record<string, unknown>;
    const out: Array<{ type: string; index: number; interrupt: Record<string, unknown> }> = [];
    for (const [type, value] of Object.entries(byType)) {
      const list = Array.isArray(value) ? value : [value];
      list.forEach((interrupt, index) => {
        out.push({ type, index, interrupt: (interrupt ?? {}) as Record<string, unknown> });
      });
    }
    return out;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    let frame = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
      if (!this.scheduled) return;
      this.scheduled = false;
      for (const listener of [...this.listeners]) listener();
    };
    // A tab in the background gets no animation frames: the timer keeps it current anyway.
    frame = requestAnimationFrame(flush);
    timer = setTimeout(flush, 250);
  }

  // -- starting and following ------------------------------------------------------------------

  /** Creates a run with `POST …/runs/stream`; resolves once the server named the run. */
  static start(path: string, body: Record<string, unknown>): Promise<RunSession> {
    const session = new RunSession();
    session.request = { method: "POST", path, body };
    session.agentId = String(body.agent_id ?? "");
    const controller = new AbortController();
    session.stream = controller;
    return new Promise((resolve, reject) => {
      let named = false;
      readStream(
        path,
        { method: "POST", body, signal: controller.signal },
        {
          onOpen(response) {
            const location = response.headers.get("content-location") ?? "";
            const match = /^\/(?:threads\/([^/]+)\/)?runs\/([^/]+)$/.exec(location);
            if (!match) throw new Error(`the server named no run (content-location: ${location})`);
            session.threadId = match[1] ?? null;
            session.kind = match[1] ? "stateful" : "stateless";
            session.runId = match[2]!;
            session.connection = "live";
            sessions.set(session.runId, session);
            named = true;
            // Its record (when it was made, the face…) while its frames stream in.
            void session.refreshInfo();
            resolve(session);
          },
          onFrame: (frame) => session.ingestLive(frame),
        },
      ).then(
        () => session.streamEnded(),
        (error: Error) => {
          if (named) return session.fail(error);
          controller.abort();
          reject(error);
        },
      );
    });
  }

  /** The session of a run: the one this page already follows, or one read from the server. */
  static open(runId: string): RunSession {
    let session = sessions.get(runId);
    if (!session) {
      session = new RunSession();
      session.runId = runId;
      sessions.set(runId, session);
      void session.load();
    }
    return session;
  }

  /** Reads the stored frames (all of them, in pages), then follows the run if it is live. */
  private async load(): Promise<void> {
    try {
      await this.readStored();
      if (this.status === "pending") this.follow();
      else this.connection = "ended";
      this.watchInterrupted();
    } catch (error) {
      // No such run (or another caller's): a page that says so, nothing live about it.
      if (error instanceof ApiError && error.status === 404) {
        this.missing = true;
        this.connection = "ended";
      } else this.fail(error as Error);
    }
    this.changed();
  }

  /**
   * Stored frames the page does not hold yet (every mode, whatever the run streams). Frames are
   * numbered from 1, so holding as many as the last number means there is no hole to fill.
   */
  private async readStored(): Promise<void> {
    let after = this.entries.length === this.lastSeq ? this.lastSeq : 0;
    for (;;) {
      const page = await api<StoredFrames>(
        inspectorApi(`/runs/${this.runId}/frames?after_seq=${after}`),
      );
      this.setInfo(page.run);
      for (const frame of page.frames) {
        if (!this.bySeq.has(frame.seq)) this.ingest(frame.seq, frame.mode, frame.data, null);
      }
      const last = page.frames.at(-1)?.seq ?? after;
      if (page.frames.length < 1000 || last <= after) break;
      after = last;
    }
    this.rebuildIfUnordered();
    this.changed();
  }

  private setInfo(run: RunInfo): void {
    this.info = run;
    this.kind = run.kind;
    this.threadId = run.thread_id ?? null;
    this.agentId = run.agent_id;
    this.status = run.status;
    if (run.output) this.output = run.output;
  }

  /** Joins the live stream from the last frame held (`Last-Event-ID`). */
  follow(): void {
    this.stream?.abort();
    const controller = new AbortController();
    this.stream = controller;
    this.connection = "live";
    this.changed();
    readStream(
      `${this.path}/stream`,
      { headers: { "last-event-id": String(this.lastSeq) }, signal: controller.signal },
      { onFrame: (frame) => this.ingestLive(frame) },
    ).then(
      () => {
        if (this.stream === controller) void this.streamEnded();
      },
      (error: Error) => this.fail(error),
    );
  }

  private ingestLive(frame: SseFrame): void {
    if (this.bySeq.has(frame.id)) return;
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(frame.data);
    } catch {
      return;
    }
    const entry = this.ingest(frame.id, modeOf(data), data, Date.now(), frame.data);
    // A segment the run record does not list yet (a resume): read it again for its start and
    // the answers it was resumed with.
    if (entry.type === "RUN_STARTED" && entry.lane === null && this.info) {
      const started = this.entries.filter((e) => e.type === "RUN_STARTED" && !e.lane).length;
      if (started > this.info.segments.length) void this.refreshInfo();
    }
  }

  /** The run record again (its segments, status, output), without its frames. */
  private async refreshInfo(): Promise<void> {
    try {
      const page = await api<StoredFrames>(
        inspectorApi(`/runs/${this.runId}/frames?after_seq=${this.lastSeq}&limit=1`),
      );
      this.info = page.run;
      this.changed();
    } catch {
      // The stream's end reads it again anyway.
    }
  }

  /** The stream closed: fill in what it did not carry (other modes) from storage. */
  private async streamEnded(): Promise<void> {
    this.stream = null;
    try {
      // A rolled-back run is deleted with its frames: there is nothing left to read.
      if (!this.rollingBack) await this.readStored();
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) this.deleted = true;
      else this.error = (error as Error).message;
    }
    this.connection = "ended";
    this.watchInterrupted();
    this.changed();
  }

  /**
   * An interrupted run may be resumed from elsewhere (another tab, a client): while a view
   * shows it, look every 2 s whether it still is, and follow it once it is not.
   */
  private watchInterrupted(): void {
    if (this.watchTimer || this.status !== "interrupted") return;
    this.watchTimer = setInterval(async () => {
      if (this.status !== "interrupted" || this.stream) {
        clearInterval(this.watchTimer!);
        this.watchTimer = null;
        return;
      }
      if (this.listeners.size === 0) return;
      try {
        const run = (
          await api<StoredFrames>(
            inspectorApi(`/runs/${this.runId}/frames?after_seq=${this.lastSeq}&limit=1`),
          )
        ).run;
        // Resumed: pending again, or already finished. Following replays what it missed.
        if (run.status !== "interrupted" && this.status === "interrupted") {
          this.status = "pending";
          this.output = null;
          this.follow();
        }
      } catch {
        // Gone or unreachable: the next look tells.
      }
    }, 2000);
  }

  private fail(error: Error): void {
    this.connection = "failed";
    this.error = error.message;
    this.changed();
  }

  // -- frames ----------------------------------------------------------------------------------

  private ingest(
    seq: number,
    mode: FrameMode,
    data: Record<string, unknown>,
    receivedAt: number | null,
    raw?: string,
  ): Entry {
    const { entry, messages } = makeEntry(seq, mode, data, receivedAt, raw);
    const { event } = entry;
    if (event?.type === "SUBAGENT_STARTED" && typeof event.subagentRunId === "string") {
      this.lanes.set(event.subagentRunId, String(event.name ?? event.subagentRunId));
    }
    this.bySeq.set(seq, entry);
    this.entries.push(entry);
    if (messages) this.addVersion(entry, messages);
    if (mode === "final") {
      this.status = String(data.status ?? this.status);
      if (data.output) this.output = outputOf(data);
    } else if (mode === "values" && typeof data.status === "string") {
      this.status = data.status;
    }
    this.changed();
    return entry;
  }

  /** Adds the state after a values or final frame; `messages` null: read them when needed. */
  private addVersion(entry: Entry, messages: AcpMessage[] | null): void {
    const values = (entry.data.values ?? {}) as Record<string, unknown>;
    const previous = this.versions.at(-1);
    const changed = changedPaths(previous?.values ?? {}, values);
    changed.delete("");
    if (previous) previous.messages = [];
    this.versions.push({ seq: entry.seq, values, messages: messages ?? [], changed });
  }

  /** The versions of `entries` again, from the first; the newest gets its messages back. */
  private rebuildVersions(): void {
    this.versions = [];
    for (const entry of this.entries) {
      if (entry.mode === "values" || entry.mode === "final") this.addVersion(entry, null);
    }
    this.restoreLatestMessages();
  }

  private restoreLatestMessages(): void {
    const latest = this.versions.at(-1);
    const entry = latest && this.bySeq.get(latest.seq);
    if (!latest || !entry || latest.messages.length === entry.messageCount) return;
    latest.messages = (JSON.parse(entry.raw).messages ?? []) as AcpMessage[];
  }

  /** Frames read from storage may fill holes the live stream left: put them back in order. */
  private rebuildIfUnordered(): void {
    const ordered = this.entries.every((e, i) => i === 0 || this.entries[i - 1]!.seq < e.seq);
    if (ordered) return;
    this.entries.sort((a, b) => a.seq - b.seq);
    this.rebuildVersions();
  }

  // -- actions ---------------------------------------------------------------------------------

  /** Cancels the run (`interrupt`: ends it as cancelled; `rollback`: also deletes it). */
  async cancel(action: "interrupt" | "rollback"): Promise<void> {
    if (action === "rollback") this.rollingBack = true;
    try {
      await api(`${this.path}/cancel?action=${action}&wait=true`, { method: "POST" });
    } catch (error) {
      this.rollingBack = false;
      throw error;
    }
    if (action === "rollback") this.deleted = true;
    if (!this.stream) await this.streamEnded();
    this.changed();
  }

  /** Resumes an interrupted run with the ACP resume body, then follows its next segment. */
  async resume(body: Record<string, unknown>): Promise<void> {
    const run = await api<RunInfo>(this.path, { method: "POST", body });
    this.status = run.status;
    this.output = null;
    this.follow();
  }

  /** Plays the frames again from the first, `perTick` frames every 16 ms. */
  replay(): void {
    this.stopReplay();
    const all = this.entries;
    const perTick = Math.max(1, Math.ceil(all.length / 300));
    this.entries = [];
    this.versions = [];
    this.connection = "replaying";
    let next = 0;
    this.replayTimer = setInterval(() => {
      const end = Math.min(all.length, next + perTick);
      for (; next < end; next++) {
        const entry = all[next]!;
        this.entries.push(entry);
        if (entry.mode === "values" || entry.mode === "final") this.addVersion(entry, null);
      }
      this.restoreLatestMessages();
      if (next >= all.length) this.stopReplay();
      this.changed();
    }, 16);
    this.changed();
  }

  stopReplay(): void {
    if (!this.replayTimer) return;
    clearInterval(this.replayTimer);
    this.replayTimer = null;
    this.entries = [...this.bySeq.values()].sort((a, b) => a.seq - b.seq);
    this.rebuildVersions();
    this.connection = this.status === "pending" && this.stream ? "live" : "ended";
    this.changed();
  }

  /** Stops following (the page keeps what it has). */
  close(): void {
    this.stream?.abort();
    this.stream = null;
    this.stopReplay();
  }
}

/**
 * A final frame's output. A result's values and messages are the frame's own (the server does
 * not repeat them in its `output`): put back, it is the output `wait` returns.
 */
function outputOf(data: Record<string, unknown>): Record<string, unknown> {
  const output = data.output as Record<string, unknown>;
  if (output.type !== "result" || "values" in output || "messages" in output) return output;
  return { type: "result", values: data.values ?? {}, messages: data.messages ?? [] };
}

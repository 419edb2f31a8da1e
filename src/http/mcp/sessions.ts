import { randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../../auth/principal.js";
import type { McpSessionRecord, McpSessionStore } from "../../storage/types.js";
import { eventLogOf, SessionEventLog } from "./event-log.js";
import { type InitializeParams, reviveTransport } from "./revive.js";

export type { InitializeParams } from "./revive.js";

/** A session unused this long is closed (a client that comes back initializes again). */
const IDLE_MS = 30 * 60 * 1000;
/** How stale a session's recorded last use may get before a request records it again. */
const TOUCH_MS = 5 * 60 * 1000;
/** Sessions one replica keeps at once; the least recently used goes first beyond it. */
const MAX_SESSIONS = 10_000;
/**
 * Sessions one caller keeps at once (on a replica, and recorded); beyond it, that caller's least
 * recently used goes, so that one caller opening sessions in a loop closes its own, not
 * everyone's.
 */
const MAX_SESSIONS_PER_CALLER = 1_000;

/** One MCP session: the SDK's transport and server, the caller it belongs to, and its scope. */
export interface McpSession {
  id: string;
  transport: StreamableHTTPServerTransport;
  server: Server;
  events: SessionEventLog;
  /** Whose session it is: requests of another caller are answered as for no such session. */
  owner: string;
  /** The path it was opened on (`/mcp` or `/mcp/{agent}`): it serves no other. */
  scope: string;
  lastUsed: number;
  /** When its record last said it was used. */
  touched: number;
}

/** Whose a principal's session is (the anonymous caller of a server without keys: ""). */
export const ownerOf = (who: Principal) => who.id ?? "";

/**
 * The MCP sessions of this replica. A session carries what Streamable HTTP keeps between
 * requests (the negotiated version, the client's capabilities, requests the server sent and
 * waits for, as an elicitation's answer); the runs and threads behind it are stored as every
 * run is. Each session is recorded in the store too, so that any replica (or this one after a
 * restart or after dropping it from memory) serves it: it is revived from its record.
 */
export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();
  /** Revivals under way, so that concurrent requests of one session make one. */
  private readonly reviving = new Map<string, Promise<McpSession | undefined>>();
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly store: McpSessionStore) {
    this.sweep = setInterval(() => this.closeIdle(Date.now() - IDLE_MS), 60_000);
    this.sweep.unref();
  }

  /**
   * A new session for `who` on `scope`: its transport (the SDK's Streamable HTTP, which
   * answers the initialize request it is handed first) and its server.
   */
  async open(
    who: Principal,
    scope: string,
    asked: InitializeParams,
    makeServer: () => Server,
  ): Promise<McpSession> {
    const owner = ownerOf(who);
    const record = (id: string): McpSessionRecord => ({
      session_id: id,
      owner,
      scope,
      protocol_version: SUPPORTED_PROTOCOL_VERSIONS.includes(asked.protocolVersion)
        ? asked.protocolVersion
        : LATEST_PROTOCOL_VERSION,
      client: JSON.stringify({ capabilities: asked.capabilities, clientInfo: asked.clientInfo }),
      used_at: Date.now(),
    });
    // Recorded before the client learns the id: any replica knows it from then on.
    return this.start(owner, scope, makeServer, randomUUID, (id) =>
      this.store.putSession(record(id), MAX_SESSIONS_PER_CALLER),
    );
  }

  /**
   * The caller's session of that id on that scope, revived from its record when this replica
   * does not hold it; undefined for another caller's, or none.
   */
  async get(
    id: string,
    who: Principal,
    scope: string,
    makeServer: () => Server,
  ): Promise<McpSession | undefined> {
    let session = this.sessions.get(id);
    if (!session) {
      // Keyed by the caller too: a session is revived only for its own caller.
      const key = `${ownerOf(who)}\n${scope}\n${id}`;
      let revival = this.reviving.get(key);
      if (!revival) {
        revival = this.revive(id, who, scope, makeServer).finally(() => this.reviving.delete(key));
        this.reviving.set(key, revival);
      }
      session = await revival;
    }
    if (!session || session.owner !== ownerOf(who) || session.scope !== scope) return undefined;
    session.lastUsed = Date.now();
    if (session.lastUsed - session.touched > TOUCH_MS) {
      session.touched = session.lastUsed;
      // Ended elsewhere (DELETE on another replica, or expired there): let go of it here too.
      const held = session;
      void this.store
        .touchSession(id, session.lastUsed)
        .then((recorded) => recorded || this.close(held))
        .catch(() => undefined);
    }
    return session;
  }

  /** The caller's session if this replica holds it (never revived). */
  held(id: string, who: Principal, scope: string): McpSession | undefined {
    const session = this.sessions.get(id);
    return session?.owner === ownerOf(who) && session.scope === scope ? session : undefined;
  }

  /** The caller's session's record (held here or not); undefined for another caller's, or none. */
  async recordOf(id: string, who: Principal, scope: string): Promise<McpSessionRecord | undefined> {
    const record = await this.store.getSession(id);
    if (!record || record.owner !== ownerOf(who) || record.scope !== scope) return undefined;
    // Expired, not swept yet.
    return record.used_at < Date.now() - IDLE_MS ? undefined : record;
  }

  get size(): number {
    return this.sessions.size;
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweep);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((session) => session.server.close().catch(() => undefined)));
  }

  private async revive(
    id: string,
    who: Principal,
    scope: string,
    makeServer: () => Server,
  ): Promise<McpSession | undefined> {
    const record = await this.recordOf(id, who, scope);
    if (!record) return undefined;
    // Another request may have revived it meanwhile (or its own initialize made it here).
    const here = this.sessions.get(id);
    if (here) return here;
    const session = await this.start(record.owner, record.scope, makeServer, () => id, undefined);
    session.touched = record.used_at;
    try {
      const client = JSON.parse(record.client) as Omit<InitializeParams, "protocolVersion">;
      await reviveTransport(session.transport, {
        ...client,
        protocolVersion: record.protocol_version,
      });
    } catch {
      // A record this version cannot serve: as if there were none.
      this.close(session);
      return undefined;
    }
    return session;
  }

  private async start(
    owner: string,
    scope: string,
    makeServer: () => Server,
    newId: () => string,
    record: ((id: string) => Promise<void>) | undefined,
  ): Promise<McpSession> {
    const own = [...this.sessions.values()].filter((session) => session.owner === owner);
    if (own.length >= MAX_SESSIONS_PER_CALLER) {
      // The caller's own oldest ends, everywhere.
      const ended = this.closeLeastRecentlyUsed(own);
      if (ended) void this.store.deleteSession(ended.id).catch(() => undefined);
    } else if (this.sessions.size >= MAX_SESSIONS) {
      // Memory only: its record stays, and a request of it brings it back.
      this.closeLeastRecentlyUsed(this.sessions.values());
    }
    const server = makeServer();
    const events = new SessionEventLog();
    const session: McpSession = {
      id: "",
      transport: undefined as unknown as StreamableHTTPServerTransport,
      server,
      events,
      owner,
      scope,
      lastUsed: Date.now(),
      touched: Date.now(),
    };
    session.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: newId,
      eventStore: events,
      onsessioninitialized: async (id) => {
        await record?.(id);
        session.id = id;
        this.sessions.set(id, session);
      },
      // DELETE: the session ends on every replica.
      onsessionclosed: async (id) => {
        this.sessions.delete(id);
        await this.store.deleteSession(id);
      },
    });
    eventLogOf.set(session.transport, events);
    session.transport.onclose = () => {
      if (session.id && this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    };
    await server.connect(session.transport);
    return session;
  }

  private closeIdle(before: number): void {
    for (const session of this.sessions.values()) {
      if (session.lastUsed < before) this.close(session);
    }
    void this.store.deleteIdleSessions(before).catch(() => undefined);
  }

  private closeLeastRecentlyUsed(among: Iterable<McpSession>): McpSession | undefined {
    let oldest: McpSession | undefined;
    for (const session of among) {
      if (!oldest || session.lastUsed < oldest.lastUsed) oldest = session;
    }
    if (oldest) this.close(oldest);
    return oldest;
  }

  /** Closed here only: its record stays, and a later request of it revives it. */
  private close(session: McpSession): void {
    this.sessions.delete(session.id);
    void session.server.close().catch(() => undefined);
  }
}

import { randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Principal } from "../../auth/principal.js";
import { SessionEventLog } from "./event-log.js";

/** A session unused this long is closed (a client that comes back initializes again). */
const IDLE_MS = 30 * 60 * 1000;
/** Sessions one replica keeps at once; the least recently used goes first beyond it. */
const MAX_SESSIONS = 10_000;
/**
 * Sessions one caller keeps at once on a replica; beyond it, that caller's least recently used
 * goes, so that one caller opening sessions in a loop closes its own, not everyone's.
 */
const MAX_SESSIONS_PER_CALLER = 1_000;

/** One MCP session: the SDK's transport and server, the caller it belongs to, and its scope. */
export interface McpSession {
  id: string;
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** Whose session it is: requests of another caller are answered as for no such session. */
  owner: string;
  /** The path it was opened on (`/mcp` or `/mcp/{agent}`): it serves no other. */
  scope: string;
  lastUsed: number;
}

/** Whose a principal's session is (the anonymous caller of a server without keys: ""). */
export const ownerOf = (who: Principal) => who.id ?? "";

/**
 * The MCP sessions of this replica. A session carries what Streamable HTTP keeps between
 * requests (the negotiated version, the client's capabilities, requests the server sent and
 * waits for, as an elicitation's answer); the runs and threads behind it are stored as every
 * run is.
 */
export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();
  private readonly sweep: NodeJS.Timeout;

  constructor() {
    this.sweep = setInterval(() => this.closeIdle(Date.now() - IDLE_MS), 60_000);
    this.sweep.unref();
  }

  /**
   * A new session for `who` on `scope`: its transport (the SDK's Streamable HTTP, which
   * answers the initialize request it is handed first) and its server.
   */
  async open(who: Principal, scope: string, makeServer: () => Server): Promise<McpSession> {
    const owner = ownerOf(who);
    const own = [...this.sessions.values()].filter((session) => session.owner === owner);
    if (own.length >= MAX_SESSIONS_PER_CALLER) this.closeLeastRecentlyUsed(own);
    else if (this.sessions.size >= MAX_SESSIONS) {
      this.closeLeastRecentlyUsed(this.sessions.values());
    }
    const server = makeServer();
    const session: McpSession = {
      id: "",
      transport: undefined as unknown as StreamableHTTPServerTransport,
      server,
      owner,
      scope,
      lastUsed: Date.now(),
    };
    session.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new SessionEventLog(),
      onsessioninitialized: (id) => {
        session.id = id;
        this.sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    session.transport.onclose = () => {
      if (session.id) this.sessions.delete(session.id);
    };
    await server.connect(session.transport);
    return session;
  }

  /** The caller's session of that id on that scope; undefined for another caller's, or none. */
  get(id: string, who: Principal, scope: string): McpSession | undefined {
    const session = this.sessions.get(id);
    if (!session || session.owner !== ownerOf(who) || session.scope !== scope) return undefined;
    session.lastUsed = Date.now();
    return session;
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

  private closeIdle(before: number): void {
    for (const session of this.sessions.values()) {
      if (session.lastUsed < before) this.close(session);
    }
  }

  private closeLeastRecentlyUsed(among: Iterable<McpSession>): void {
    let oldest: McpSession | undefined;
    for (const session of among) {
      if (!oldest || session.lastUsed < oldest.lastUsed) oldest = session;
    }
    if (oldest) this.close(oldest);
  }

  private close(session: McpSession): void {
    this.sessions.delete(session.id);
    void session.server.close().catch(() => undefined);
  }
}

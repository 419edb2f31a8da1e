import type Database from "better-sqlite3";
import type { McpCallStreamRecord, McpSessionRecord, McpSessionStore } from "../mcp-sessions.js";

type Write = <T>(work: () => T) => Promise<T>;

/** The MCP face's sessions and call streams in SQLite (see storage/mcp-sessions.ts). */
export class SqliteMcpSessions implements McpSessionStore {
  readonly #put: Database.Statement<[string, string, string, string, string, number]>;
  readonly #prune: Database.Statement<[string, number]>;
  readonly #get: Database.Statement<[string], McpSessionRecord>;
  readonly #touch: Database.Statement<[number, string]>;
  readonly #delete: Database.Statement<[string]>;
  readonly #deleteIdle: Database.Statement<[number]>;
  readonly #putStream: Database.Statement<[string, string, string, string, string | null, string]>;
  readonly #getStream: Database.Statement<[string], McpCallStreamRecord>;

  constructor(
    db: Database.Database,
    private readonly write: Write,
  ) {
    this.#put = db.prepare(
      `INSERT OR REPLACE INTO mcp_sessions
         (session_id, owner, scope, protocol_version, client, used_at) VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.#prune = db.prepare(
      `DELETE FROM mcp_sessions WHERE session_id IN (SELECT session_id FROM mcp_sessions
         WHERE owner = ? ORDER BY used_at DESC, session_id LIMIT -1 OFFSET ?)`,
    );
    this.#get = db.prepare(
      `SELECT session_id, owner, scope, protocol_version, client, used_at
       FROM mcp_sessions WHERE session_id = ?`,
    );
    this.#touch = db.prepare("UPDATE mcp_sessions SET used_at = ? WHERE session_id = ?");
    this.#delete = db.prepare("DELETE FROM mcp_sessions WHERE session_id = ?");
    this.#deleteIdle = db.prepare("DELETE FROM mcp_sessions WHERE used_at < ?");
    // Only for a session that exists: a call of a session deleted meanwhile is not recorded.
    this.#putStream = db.prepare(
      `INSERT OR IGNORE INTO mcp_call_streams
         (stream_key, session_id, run_id, request_id, progress_token)
       SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM mcp_sessions WHERE session_id = ?)`,
    );
    this.#getStream = db.prepare(
      `SELECT stream_key, session_id, run_id, request_id, progress_token
       FROM mcp_call_streams WHERE stream_key = ?`,
    );
  }

  async putSession(s: McpSessionRecord, maxPerOwner: number): Promise<void> {
    await this.write(() => {
      this.#put.run(s.session_id, s.owner, s.scope, s.protocol_version, s.client, s.used_at);
      this.#prune.run(s.owner, maxPerOwner);
    });
  }

  async getSession(sessionId: string): Promise<McpSessionRecord | null> {
    return this.#get.get(sessionId) ?? null;
  }

  async touchSession(sessionId: string, usedAt: number): Promise<boolean> {
    return this.write(() => this.#touch.run(usedAt, sessionId).changes > 0);
  }

  async deleteSession(sessionId: string): Promise<void> {
    await this.write(() => this.#delete.run(sessionId));
  }

  async deleteIdleSessions(before: number): Promise<number> {
    return this.write(() => this.#deleteIdle.run(before).changes);
  }

  async putCallStream(s: McpCallStreamRecord): Promise<void> {
    await this.write(() =>
      this.#putStream.run(
        s.stream_key,
        s.session_id,
        s.run_id,
        s.request_id,
        s.progress_token,
        s.session_id,
      ),
    );
  }

  async getCallStream(streamKey: string): Promise<McpCallStreamRecord | null> {
    return this.#getStream.get(streamKey) ?? null;
  }
}

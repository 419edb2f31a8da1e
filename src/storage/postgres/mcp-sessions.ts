import type { McpCallStreamRecord, McpSessionRecord, McpSessionStore } from "../mcp-sessions.js";
import type { Database } from "./connection.js";

interface SessionRow extends Omit<McpSessionRecord, "used_at"> {
  used_at: string;
}

/** The MCP face's sessions and call streams in PostgreSQL (see storage/mcp-sessions.ts). */
export class PostgresMcpSessions implements McpSessionStore {
  constructor(private readonly db: Database) {}

  async putSession(s: McpSessionRecord, maxPerOwner: number): Promise<void> {
    await this.db.write(async (db) => {
      await db.query(
        `INSERT INTO mcp_sessions (session_id, owner, scope, protocol_version, client, used_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, scope = excluded.scope,
           protocol_version = excluded.protocol_version, client = excluded.client,
           used_at = excluded.used_at`,
        [s.session_id, s.owner, s.scope, s.protocol_version, s.client, s.used_at],
      );
      await db.query(
        `DELETE FROM mcp_sessions WHERE session_id IN (SELECT session_id FROM mcp_sessions
           WHERE owner = $1 ORDER BY used_at DESC, session_id OFFSET $2)`,
        [s.owner, maxPerOwner],
      );
    });
  }

  async getSession(sessionId: string): Promise<McpSessionRecord | null> {
    const result = await this.db.query<SessionRow>(
      `SELECT session_id, owner, scope, protocol_version, client, used_at
       FROM mcp_sessions WHERE session_id = $1`,
      [sessionId],
    );
    const row = result.rows[0];
    return row ? { ...row, used_at: Number(row.used_at) } : null;
  }

  async touchSession(sessionId: string, usedAt: number): Promise<boolean> {
    const result = await this.db.write((db) =>
      db.query("UPDATE mcp_sessions SET used_at = $1 WHERE session_id = $2", [usedAt, sessionId]),
    );
    return (result.rowCount ?? 0) > 0;
  }

  async deleteSession(sessionId: string): Promise<void> {
    await this.db.write((db) =>
      db.query("DELETE FROM mcp_sessions WHERE session_id = $1", [sessionId]),
    );
  }

  async deleteIdleSessions(before: number): Promise<number> {
    const result = await this.db.write((db) =>
      db.query("DELETE FROM mcp_sessions WHERE used_at < $1", [before]),
    );
    return result.rowCount ?? 0;
  }

  async putCallStream(s: McpCallStreamRecord): Promise<void> {
    // Only for a session that exists: a call of a session deleted meanwhile is not recorded.
    await this.db.write((db) =>
      db.query(
        `INSERT INTO mcp_call_streams (stream_key, session_id, run_id, request_id, progress_token)
         SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM mcp_sessions WHERE session_id = $2)
         ON CONFLICT (stream_key) DO NOTHING`,
        [s.stream_key, s.session_id, s.run_id, s.request_id, s.progress_token],
      ),
    );
  }

  async getCallStream(streamKey: string): Promise<McpCallStreamRecord | null> {
    const result = await this.db.query<McpCallStreamRecord>(
      `SELECT stream_key, session_id, run_id, request_id, progress_token
       FROM mcp_call_streams WHERE stream_key = $1`,
      [streamKey],
    );
    return result.rows[0] ?? null;
  }
}

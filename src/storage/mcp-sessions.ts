/**
 * What the MCP face keeps of its sessions (Streamable HTTP, 2025 revisions) so that any replica
 * can serve a session another one opened, and resume a tools/call stream it did not send.
 */

/** A session as its initialize negotiated it. */
export interface McpSessionRecord {
  session_id: string;
  /** Whose session it is (the principal's id; "" for the anonymous caller). */
  owner: string;
  /** The path it was opened on: it serves no other. */
  scope: string;
  protocol_version: string;
  /** The initialize request's `capabilities` and `clientInfo`, as JSON. */
  client: string;
  /** When it was last used (ms since the epoch), coarsely: idle sessions are deleted. */
  used_at: number;
}

/** A tools/call's SSE stream: what its event ids' key stands for. */
export interface McpCallStreamRecord {
  stream_key: string;
  session_id: string;
  run_id: string;
  /** The call's JSON-RPC request id, as JSON (a string or a number). */
  request_id: string;
  /** The call's progress token, as JSON; null for a call without one. */
  progress_token: string | null;
}

export interface McpSessionStore {
  /**
   * Records a session; then its owner keeps at most `maxPerOwner` (the most recently used):
   * one caller opening sessions without end removes its own, never another's.
   */
  putSession(session: McpSessionRecord, maxPerOwner: number): Promise<void>;
  getSession(sessionId: string): Promise<McpSessionRecord | null>;
  /** Records a use of the session; false when it is not recorded (any more). */
  touchSession(sessionId: string, usedAt: number): Promise<boolean>;
  /** Deletes the session and its call streams. */
  deleteSession(sessionId: string): Promise<void>;
  /** Deletes sessions unused since `before` (and their call streams); returns how many. */
  deleteIdleSessions(before: number): Promise<number>;
  /** Records a call stream; nothing when its session is gone. */
  putCallStream(stream: McpCallStreamRecord): Promise<void>;
  getCallStream(streamKey: string): Promise<McpCallStreamRecord | null>;
}

-- MCP sessions (Streamable HTTP, 2025 revisions), so that any replica, or the server after a
-- restart, knows a session it did not open: whose it is, the path it serves, the version and
-- client it negotiated. Idle ones are deleted (src/http/mcp/sessions.ts).
CREATE TABLE mcp_sessions (
  session_id       text COLLATE "C" PRIMARY KEY,
  owner            text NOT NULL,
  scope            text NOT NULL,
  protocol_version text NOT NULL,
  client           text NOT NULL,
  used_at          bigint NOT NULL
);
CREATE INDEX mcp_sessions_used_at ON mcp_sessions (used_at);
CREATE INDEX mcp_sessions_owner ON mcp_sessions (owner, used_at);

-- The tools/call streams of a session: the key its SSE event ids carry names the call's run,
-- request id and progress token, so that a stream resumes from the run's frames anywhere.
-- Deleted with their session or their run.
CREATE TABLE mcp_call_streams (
  stream_key     text COLLATE "C" PRIMARY KEY,
  session_id     text COLLATE "C" NOT NULL REFERENCES mcp_sessions (session_id) ON DELETE CASCADE,
  run_id         text COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  request_id     text NOT NULL,
  progress_token text
);
CREATE INDEX mcp_call_streams_session ON mcp_call_streams (session_id);
CREATE INDEX mcp_call_streams_run ON mcp_call_streams (run_id);

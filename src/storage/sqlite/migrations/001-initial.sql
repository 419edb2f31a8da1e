-- Threads, checkpoints, runs, run frames and webhook deliveries.
-- JSON columns hold JSON text (never SQL NULL): `null` is stored as the text 'null'.
-- Timestamps are ISO-8601 UTC strings with milliseconds, so text order is time order.

CREATE TABLE threads (
  thread_id     TEXT PRIMARY KEY,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  metadata      TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('idle', 'busy', 'interrupted', 'error')),
  "values"      TEXT NOT NULL,
  messages      TEXT NOT NULL,
  checkpoint_id TEXT,
  hidden        INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1))
);

-- Thread search lists visible threads newest first, optionally by status.
CREATE INDEX threads_visible_by_created
  ON threads (created_at DESC, thread_id DESC) WHERE hidden = 0;
CREATE INDEX threads_visible_by_status
  ON threads (status, created_at DESC, thread_id DESC) WHERE hidden = 0;

-- One row per top-level metadata key; value_json is canonical JSON (sorted keys), so
-- containment search is an indexed equality on (key, value_json) per requested key.
CREATE TABLE thread_metadata (
  thread_id  TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  key        TEXT NOT NULL,
  value_json TEXT NOT NULL,
  PRIMARY KEY (thread_id, key)
) WITHOUT ROWID;

CREATE INDEX thread_metadata_by_value ON thread_metadata (key, value_json, thread_id);

CREATE TABLE checkpoints (
  -- Insertion order: checkpoints created in the same millisecond still sort newest first.
  seq                  INTEGER PRIMARY KEY,
  checkpoint_id        TEXT NOT NULL UNIQUE,
  thread_id            TEXT NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  parent_checkpoint_id TEXT,
  created_at           TEXT NOT NULL,
  "values"             TEXT NOT NULL,
  messages             TEXT NOT NULL,
  metadata             TEXT NOT NULL
);

CREATE INDEX checkpoints_by_thread ON checkpoints (thread_id, seq DESC);

CREATE TABLE runs (
  seq               INTEGER PRIMARY KEY,
  run_id            TEXT NOT NULL UNIQUE,
  -- Set to NULL when the thread is deleted: the run record stays readable.
  thread_id         TEXT REFERENCES threads (thread_id) ON DELETE SET NULL,
  agent_id          TEXT NOT NULL,
  kind              TEXT NOT NULL CHECK (kind IN ('stateful', 'stateless')),
  status            TEXT NOT NULL
                    CHECK (status IN ('pending', 'error', 'success', 'timeout', 'interrupted')),
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  creation          TEXT NOT NULL,
  metadata          TEXT NOT NULL,
  output            TEXT NOT NULL,
  interrupts        TEXT NOT NULL,
  resume            TEXT NOT NULL,
  segments          TEXT NOT NULL,
  start_after       TEXT NOT NULL,
  checkpoint_before TEXT,
  owner             TEXT,
  lease_expires_at  TEXT,
  cancel_requested  TEXT CHECK (cancel_requested IN ('interrupt', 'rollback')),
  last_seq          INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX runs_by_thread ON runs (thread_id, created_at DESC, seq DESC);
CREATE INDEX runs_by_created ON runs (created_at DESC, seq DESC);
CREATE INDEX runs_by_agent ON runs (agent_id, created_at DESC, seq DESC);
CREATE INDEX runs_by_status ON runs (status, created_at DESC, seq DESC);
-- The queue: pending runs oldest first, with every column the claim filter reads, so claimRun,
-- expiredRuns and nextStartAfter walk only pending runs and stop at the first match.
CREATE INDEX runs_claimable
  ON runs (created_at, seq, start_after, owner, lease_expires_at) WHERE status = 'pending';
-- "Is this thread busy / is an older run of this thread still queued": per-thread pending runs.
CREATE INDEX runs_pending_by_thread
  ON runs (thread_id, created_at, seq) WHERE status = 'pending';

-- Like thread_metadata: run metadata is written once, at insert.
CREATE TABLE run_metadata (
  run_id     TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  key        TEXT NOT NULL,
  value_json TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE INDEX run_metadata_by_value ON run_metadata (key, value_json, run_id);

CREATE TABLE run_frames (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq    INTEGER NOT NULL CHECK (seq > 0),
  mode   TEXT NOT NULL CHECK (mode IN ('values', 'custom', 'subagent', 'final')),
  data   TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE webhook_deliveries (
  seq             INTEGER PRIMARY KEY,
  delivery_id     TEXT NOT NULL UNIQUE,
  run_id          TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  url             TEXT NOT NULL,
  body            TEXT NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  last_error      TEXT,
  created_at      TEXT NOT NULL
);

CREATE INDEX webhook_deliveries_due
  ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_run ON webhook_deliveries (run_id, seq);

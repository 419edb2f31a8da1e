-- Threads, checkpoints, runs, run frames and webhook deliveries (PostgreSQL).
--
-- JSON columns are `json`, not `jsonb`: json keeps the text exactly as written (key order,
-- `\u0000`, lone surrogates), which the contract's round-trip rule needs; jsonb reorders keys and
-- rejects those escapes. JSON `null` is stored as the json text 'null', never SQL NULL.
--
-- Containment search ("every given top-level key present with a deep-equal value") runs on
-- `*_digest text[]` columns: one SHA-256 per top-level entry of the object, taken over the key
-- and the value's canonical JSON (sorted keys), computed by the server. `digest @> needle` is then
-- exactly the contract's rule, indexable with GIN, and independent of what the JSON contains.
--
-- Text ids use COLLATE "C": byte order, the same tie-break order as SQLite, and cheaper compares.
-- `seq` identity columns record insertion order, so "newest first" holds within a millisecond.

CREATE TABLE threads (
  thread_id       text COLLATE "C" PRIMARY KEY,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  metadata        json NOT NULL,
  metadata_digest text[] NOT NULL,
  status          text NOT NULL CHECK (status IN ('idle', 'busy', 'interrupted', 'error')),
  "values"        json NOT NULL,
  values_digest   text[] NOT NULL,
  messages        json NOT NULL,
  checkpoint_id   text COLLATE "C",
  hidden          boolean NOT NULL DEFAULT false
) WITH (fillfactor = 90);

-- Thread search lists visible threads newest first, optionally by status or metadata.
CREATE INDEX threads_visible_by_created
  ON threads (created_at DESC, thread_id DESC) WHERE NOT hidden;
CREATE INDEX threads_visible_by_status
  ON threads (status, created_at DESC, thread_id DESC) WHERE NOT hidden;
-- fastupdate off: with GIN's pending list, each search scans every entry not yet merged (tens of
-- ms after a burst of inserts, until vacuum); a thread or run adds only a few entries each.
CREATE INDEX threads_visible_metadata
  ON threads USING gin (metadata_digest) WITH (fastupdate = off) WHERE NOT hidden;

CREATE TABLE checkpoints (
  seq                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  checkpoint_id        text COLLATE "C" NOT NULL UNIQUE,
  thread_id            text COLLATE "C" NOT NULL REFERENCES threads (thread_id) ON DELETE CASCADE,
  parent_checkpoint_id text COLLATE "C",
  created_at           timestamptz NOT NULL,
  "values"             json NOT NULL,
  values_digest        text[] NOT NULL,
  messages             json NOT NULL,
  metadata             json NOT NULL,
  -- metadata.run_id when it is a string: restoreCheckpoint's discardRunId deletes by it.
  run_id               text COLLATE "C"
);

CREATE INDEX checkpoints_by_thread ON checkpoints (thread_id, seq DESC);
CREATE INDEX checkpoints_by_run ON checkpoints (thread_id, run_id) WHERE run_id IS NOT NULL;

CREATE TABLE runs (
  seq               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id            text COLLATE "C" NOT NULL UNIQUE,
  -- Set to NULL when the thread is deleted: the run record stays readable.
  thread_id         text COLLATE "C" REFERENCES threads (thread_id) ON DELETE SET NULL,
  agent_id          text COLLATE "C" NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('stateful', 'stateless')),
  status            text NOT NULL
                    CHECK (status IN ('pending', 'error', 'success', 'timeout', 'interrupted')),
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL,
  creation          json NOT NULL,
  metadata          json NOT NULL,
  metadata_digest   text[] NOT NULL,
  output            json NOT NULL,
  interrupts        json NOT NULL,
  resume            json NOT NULL,
  segments          json NOT NULL,
  start_after       timestamptz NOT NULL,
  checkpoint_before text COLLATE "C",
  owner             text,
  lease_expires_at  timestamptz,
  cancel_requested  text CHECK (cancel_requested IN ('interrupt', 'rollback')),
  last_seq          integer NOT NULL DEFAULT 0
) WITH (fillfactor = 90);

-- Lease renewals and last_seq bumps touch no indexed column, so they stay HOT updates.
CREATE INDEX runs_by_thread ON runs (thread_id, created_at DESC, seq DESC);
CREATE INDEX runs_by_created ON runs (created_at DESC, seq DESC);
CREATE INDEX runs_by_agent ON runs (agent_id, created_at DESC, seq DESC);
CREATE INDEX runs_by_status ON runs (status, created_at DESC, seq DESC);
CREATE INDEX runs_metadata ON runs USING gin (metadata_digest) WITH (fastupdate = off);
-- The queue: pending runs oldest first (claimRun, expiredRuns, nextStartAfter, renewLeases).
CREATE INDEX runs_claimable ON runs (created_at, seq) WHERE status = 'pending';
-- "Is this thread busy / is an older run of this thread still queued": per-thread pending runs.
CREATE INDEX runs_pending_by_thread
  ON runs (thread_id, created_at, seq) WHERE status = 'pending';

CREATE TABLE run_frames (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq    integer NOT NULL CHECK (seq > 0),
  mode   text NOT NULL CHECK (mode IN ('values', 'custom', 'subagent', 'final')),
  data   text NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE webhook_deliveries (
  seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id     text COLLATE "C" NOT NULL UNIQUE,
  run_id          text COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  url             text NOT NULL,
  body            text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  state           text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  last_error      text,
  created_at      timestamptz NOT NULL
);

CREATE INDEX webhook_deliveries_due
  ON webhook_deliveries (next_attempt_at, seq) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_run ON webhook_deliveries (run_id, seq);

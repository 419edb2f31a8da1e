-- A2A push notifications: how far each task's relay has queued its stream events, so that a
-- restarted server (or another replica) carries on where it stopped.
CREATE TABLE a2a_push_cursors (
  run_id text COLLATE "C" PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
  seq    integer NOT NULL,
  closed boolean NOT NULL
);

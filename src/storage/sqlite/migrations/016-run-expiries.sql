-- When a run is to be deleted (an MCP task's granted ttl, from the run's creation): the sweep
-- deletes each finished run whose time has come, oldest first. Goes with its run.
CREATE TABLE run_expiries (
  run_id     TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
  expires_at TEXT NOT NULL
);
CREATE INDEX run_expiries_by_time ON run_expiries (expires_at);

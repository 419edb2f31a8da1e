-- Run creation counts an agent's pending runs (its queue limit) on every request. Without this
-- index the planner ANDs two bitmaps, one of them every run the agent ever had (runs_by_agent),
-- so each creation cost more than the last: 2.2 ms of the database's CPU after 3,500 runs.
-- Partial, as SQLite's 002: only pending runs are in it, so finished runs cost it nothing.
-- Built inside the migration's transaction, which holds writes to runs while it reads the
-- table: on a large one, upgrading pauses run creation and ends for that long.
CREATE INDEX runs_pending_by_agent ON runs (agent_id) WHERE status = 'pending';

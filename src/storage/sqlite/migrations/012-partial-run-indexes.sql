-- Runs without a thread (a stateless run once its hidden thread is deleted: most of them) and
-- runs without a principal (every run of a server without authentication) are never looked up
-- by that column: every query filters it with `= ?`, which implies IS NOT NULL, so the planner
-- still uses these indexes for them. Partial, those runs cost them no entry.
DROP INDEX runs_by_thread;
CREATE INDEX runs_by_thread
  ON runs (thread_id, created_at DESC, seq DESC) WHERE thread_id IS NOT NULL;
DROP INDEX runs_by_principal;
CREATE INDEX runs_by_principal
  ON runs (principal, created_at DESC, seq DESC) WHERE principal IS NOT NULL;

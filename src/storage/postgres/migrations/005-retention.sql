-- Retention (src/retention): each sweep reads one short index range per batch.
-- Set once the frames sweep has compacted a finished run's frames (or found nothing to compact),
-- so that it handles each run once.
ALTER TABLE runs ADD COLUMN frames_compacted_at timestamptz;

-- Finished stateless runs, oldest last update (their end) first. Lease renewals and last_seq
-- bumps touch none of these columns, so they stay HOT updates.
CREATE INDEX runs_finished_stateless
  ON runs (updated_at, seq) WHERE kind = 'stateless' AND status IN ('success', 'error', 'timeout');
-- Finished runs whose frames are still to compact; a run leaves it once compacted.
CREATE INDEX runs_frames_to_compact
  ON runs (updated_at, seq)
  WHERE frames_compacted_at IS NULL AND status IN ('success', 'error', 'timeout');
-- Visible threads by last update: the idle-thread sweep's candidates, least recently used first.
CREATE INDEX threads_visible_by_updated ON threads (updated_at, thread_id) WHERE NOT hidden;

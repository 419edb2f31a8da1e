-- Run creation counts an agent's pending runs (its queue limit) on every request. Without this
-- index that count reads every pending run's row to compare agent_id; with it, it is a range of
-- one small index. Partial: only pending runs are in it, so finished runs cost it nothing.
CREATE INDEX runs_pending_by_agent ON runs (agent_id) WHERE status = 'pending';

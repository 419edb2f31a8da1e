-- Tracing: the W3C trace context of the request that created a run, so that every segment of the
-- run (a resume, a retry after a restart, another replica's) joins the run's trace.
ALTER TABLE runs ADD COLUMN trace_context TEXT;

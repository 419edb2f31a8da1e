-- Webhook deliveries in streams: the deliveries of one stream (an ACP run's webhook, or one A2A
-- push config of a task) are sent one at a time, in order; different streams go independently.
-- Only a stream's first pending delivery is due: the others wait parked (their next attempt at
-- the end of time) until the one before them is delivered or fails, which makes the next one
-- due. `target` is the receiver's origin (scheme, host and port), which the deliverer limits
-- to a few attempts at once.
ALTER TABLE webhook_deliveries ADD COLUMN stream text COLLATE "C";
ALTER TABLE webhook_deliveries ADD COLUMN target text COLLATE "C";
-- Deliveries queued before: one stream per run, as they were ordered then.
UPDATE webhook_deliveries SET stream = run_id;
ALTER TABLE webhook_deliveries ALTER COLUMN stream SET NOT NULL;
CREATE INDEX webhook_deliveries_stream
  ON webhook_deliveries (stream, seq) WHERE state = 'pending';
UPDATE webhook_deliveries AS d SET next_attempt_at = '9999-12-31T23:59:59.999Z'
WHERE d.state = 'pending' AND EXISTS (
  SELECT 1 FROM webhook_deliveries AS earlier
  WHERE earlier.stream = d.stream AND earlier.state = 'pending' AND earlier.seq < d.seq);

-- A task's push configs are read in order for each of its events (the relay fans each event
-- out to every config): in index order, without a sort.
CREATE INDEX a2a_push_configs_in_order ON a2a_push_configs (run_id, created_at, config_id);

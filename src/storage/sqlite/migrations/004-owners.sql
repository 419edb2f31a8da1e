-- Ownership: the principal (an API key's `key:<name>` or a token's `user:<id>`) that created
-- a thread or run. NULL for data from before this migration (and from servers without
-- authentication): only admin keys reach it until `acp-agui assign-owner` gives it an owner.
ALTER TABLE threads ADD COLUMN principal TEXT;
ALTER TABLE runs ADD COLUMN principal TEXT;

-- A principal's searches stay index range scans, newest first, however many others there are.
CREATE INDEX threads_visible_by_principal
  ON threads (principal, created_at DESC, thread_id DESC) WHERE hidden = 0;
CREATE INDEX runs_by_principal ON runs (principal, created_at DESC, seq DESC);

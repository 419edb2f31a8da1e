-- A2A push notifications: the configs a client set on a task (an ACP run), and the headers a
-- webhook delivery carries besides the server's own (the config's token and authorization).
ALTER TABLE webhook_deliveries ADD COLUMN headers TEXT;

CREATE TABLE a2a_push_configs (
  run_id         TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  config_id      TEXT NOT NULL,
  url            TEXT NOT NULL,
  token          TEXT,
  authentication TEXT,
  created_at     TEXT NOT NULL,
  PRIMARY KEY (run_id, config_id)
);

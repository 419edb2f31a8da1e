-- A2A push notifications: the configs a client set on a task (an ACP run), and the headers a
-- webhook delivery carries besides the server's own (the config's token and authorization).
ALTER TABLE webhook_deliveries ADD COLUMN headers text;

CREATE TABLE a2a_push_configs (
  run_id         text COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  config_id      text COLLATE "C" NOT NULL,
  url            text NOT NULL,
  token          text,
  authentication text,
  created_at     timestamptz NOT NULL,
  PRIMARY KEY (run_id, config_id)
);

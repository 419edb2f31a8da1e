-- A run's long output, packed (packed-json.ts), is stored in parts of about 32 KB: SQLite copies
-- a bound value and then copies it again into the row's record, so megabytes stored as one
-- value were copied whole twice; a part at a time, they are not. The run's `output` column then
-- holds the marker x'02', and the parts go with the run (ON DELETE CASCADE).
CREATE TABLE run_output_parts (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  part   INTEGER NOT NULL,
  data   BLOB NOT NULL
);
CREATE UNIQUE INDEX run_output_parts_by_run ON run_output_parts (run_id, part);

-- An output written again (a resumed run ends again) replaces its parts. Only a run whose old
-- output was in parts pays for the deletion.
CREATE TRIGGER run_output_parts_replaced AFTER UPDATE OF output ON runs
  WHEN old.output = x'02'
BEGIN
  DELETE FROM run_output_parts WHERE run_id = old.run_id;
END;

-- A run's output that holds its thread's state is stored with a reference to the checkpoint
-- written with it, whose state it shares (src/storage/sqlite/output-state.ts). A checkpoint can
-- go while its run stays (its thread deleted, retention keeping a thread's newest checkpoint
-- only, a rollback): the run's output is then written whole again, first. The functions are the
-- server's own (open-database.ts).
CREATE TRIGGER checkpoint_deleted_keeps_run_output BEFORE DELETE ON checkpoints
BEGIN
  UPDATE runs SET output = acp_output_with_state(output, old."values", old.messages)
  WHERE run_id = json_extract(old.metadata, '$.run_id')
    AND acp_output_state_of(output) = old.seq;
END;

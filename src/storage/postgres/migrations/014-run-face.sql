-- The face a run was started from (acp, agui, copilotkit, a2a, …), written with the run's insert
-- and shown by the inspector. Runs from before this column have none (NULL).
ALTER TABLE runs ADD COLUMN face text;

-- Fenced writes: every claim bumps the run's lease_epoch, and an executing replica's writes name
-- the owner and epoch they were claimed under, so a stalled replica's late writes are refused.
ALTER TABLE runs ADD COLUMN lease_epoch integer NOT NULL DEFAULT 0;

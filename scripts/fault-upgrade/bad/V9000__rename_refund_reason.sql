-- Fixture of `scripts/fault-upgrade.sh --bad-migration`, never a real migration: an expand/contract violation. The
-- previous release inserts refunds.reason; after this rename its refunds fail (the walkthrough's step 4), and the
-- migration lint refuses the statement (renaming-column).
ALTER TABLE refunds RENAME COLUMN reason TO refund_reason;

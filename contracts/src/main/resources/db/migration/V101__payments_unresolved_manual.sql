-- Issue 42: the resolver claims manual payments whose PSP call is pending (AUTHORIZING, CAPTURING, CANCELING) with the
-- automatic ones (PROCESSING, UNKNOWN), by next_attempt_at (payments-api resolver-claim.sql). V1's partial index
-- payments_unresolved covers only PROCESSING and UNKNOWN, so the claim's wider predicate would scan payments on every
-- run; this one covers the claim as it is now (V1's stays for the previous release during a roll).
--
-- CONCURRENTLY (no lock that stops writes to payments while it builds), so this migration holds nothing else: Flyway
-- runs a script whose only statement cannot run in a transaction outside one. IF NOT EXISTS: re-runnable after a
-- failed build is dropped (an INVALID index of this name must be dropped by hand first: docs/operations.md).
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_unresolved_all ON payments (next_attempt_at)
    WHERE status IN ('PROCESSING', 'UNKNOWN', 'AUTHORIZING', 'CAPTURING', 'CANCELING');

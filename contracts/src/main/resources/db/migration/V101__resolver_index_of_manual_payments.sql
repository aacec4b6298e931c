-- The resolver's claim (resolver-claim.sql) of manual payments whose PSP call is pending (V98's AUTHORIZING, CAPTURING,
-- CANCELING), as V1's payments_unresolved serves its claim of PROCESSING and UNKNOWN ones: without it every run of the
-- resolver would read the whole payments table. CONCURRENTLY, so that captures go on while it is built (docs/operations.md
-- "Expand and contract"); Flyway runs it outside a transaction, and every migration runner takes Flyway's session lock
-- instead of its transactional one, which CREATE INDEX CONCURRENTLY would wait for forever (FlywaySessionLock).
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_manual_pending ON payments (next_attempt_at)
    WHERE status IN ('AUTHORIZING', 'CAPTURING', 'CANCELING');

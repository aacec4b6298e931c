-- refunds_pending (V1) indexes every PENDING refund. A statement that finds one refund by its id and guards it with
-- status = 'PENDING' (the worker's claim, settle_refund, the sync's reschedule) implies that index's predicate, so the
-- planner may walk the whole index with the id as a filter instead of one primary-key look-up, and it does whenever
-- the index's statistics were taken while few refunds were PENDING: then every claim during a backlog reads the whole
-- backlog (3.5 ms per claim at a backlog of 4,000, docs/benchmarks.md). The index now holds the scheduled refunds
-- only (next_attempt_at set), which are all the sync reads through it (next_attempt_at <= now()); the unscheduled ones
-- are in V30's refunds_pending_unscheduled. No by-id guard implies next_attempt_at IS NOT NULL, so those statements
-- can only use the primary key. V104 drops refunds_pending once this one exists. CONCURRENTLY, as V101 explains
-- (one statement per migration: CONCURRENTLY cannot run in a transaction).
CREATE INDEX CONCURRENTLY IF NOT EXISTS refunds_scheduled ON refunds (next_attempt_at)
    WHERE status = 'PENDING' AND next_attempt_at IS NOT NULL;

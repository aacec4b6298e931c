-- The expiry of authorizations (issue 42; docs/api.md "Manual capture", docs/operations.md "Payment states"). One index
-- for both of its reads, so that neither reads the whole payments table:
--   - the payments-api expiry job claims AUTHORIZED payments authorized before now() - expire-after, oldest first
--     (expiry-claim.sql): the prefix (status = 'AUTHORIZED', authorized_at <= ...) in authorized_at order;
--   - the resolver claims EXPIRING payments whose void is pending by next_attempt_at (resolver-claim.sql, its third arm
--     beside V1's payments_unresolved and V101's payments_manual_pending): the prefix status = 'EXPIRING', only the
--     few expiries in flight, then next_attempt_at.
-- CONCURRENTLY, so that captures go on while it is built (as V101; FlywaySessionLock); alone in its migration, since
-- Flyway runs it outside a transaction.
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_authorized_expiry ON payments (status, authorized_at, next_attempt_at)
    WHERE status IN ('AUTHORIZED', 'EXPIRING');

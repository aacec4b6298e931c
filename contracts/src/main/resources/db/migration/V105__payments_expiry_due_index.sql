-- V102's payments_authorized_expiry (status, authorized_at, next_attempt_at) WHERE status IN ('AUTHORIZED', 'EXPIRING')
-- served the expiry's claim and the resolver's claim of EXPIRING payments, but also matched the guarded move that
-- starts a capture or cancel (id = $1 AND ... AND status = 'AUTHORIZED', PaymentRepository.startMove): whenever the
-- index's statistics were taken while few payments were AUTHORIZED, that move's plan read every AUTHORIZED payment
-- with the id as a filter instead of one primary-key look-up (docs/operations.md, "Payment states"; the refunds' same
-- trap: V103). This index holds the same rows for the same two claims, under a predicate that both claims imply (a
-- strict comparison on authorized_at, on next_attempt_at) and no statement on one payment does. V106 drops V102's.
-- CONCURRENTLY, alone in its migration, as V101 explains.
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_expiry_due ON payments (status, authorized_at, next_attempt_at)
    WHERE (status = 'AUTHORIZED' AND authorized_at IS NOT NULL) OR (status = 'EXPIRING' AND next_attempt_at IS NOT NULL);

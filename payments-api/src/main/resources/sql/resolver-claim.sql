-- Claims up to $1 due payments for the resolver, with a lease of $2 seconds (ResolverRepository.claim): automatic
-- ones PROCESSING (stuck) or UNKNOWN, manual ones whose PSP call (authorize, capture, void, the expiry's void) is
-- pending. One locking read per partial index (V1's payments_unresolved, V101's payments_manual_pending, V105's
-- payments_expiry_due), so that no run reads the whole table; the earliest $1 of them are claimed (rows locked
-- but not claimed are free again at the statement's commit).
WITH automatic AS (SELECT id, next_attempt_at FROM payments
                    WHERE status IN ('PROCESSING', 'UNKNOWN') AND next_attempt_at <= now()
                    ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED),
     manual AS (SELECT id, next_attempt_at FROM payments
                 WHERE status IN ('AUTHORIZING', 'CAPTURING', 'CANCELING') AND next_attempt_at <= now()
                 ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED),
     expiring AS (SELECT id, next_attempt_at FROM payments
                   WHERE status = 'EXPIRING' AND next_attempt_at <= now()
                   ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED),
     due AS (SELECT id
               FROM (SELECT * FROM automatic UNION ALL SELECT * FROM manual UNION ALL SELECT * FROM expiring) candidates
              ORDER BY next_attempt_at LIMIT $1)
UPDATE payments p
   SET attempts = p.attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
 WHERE p.id IN (SELECT id FROM due)
   AND p.status IN ('PROCESSING', 'UNKNOWN', 'AUTHORIZING', 'CAPTURING', 'CANCELING', 'EXPIRING')
RETURNING p.id, p.merchant_id, p.status, p.amount, p.currency, p.source, p.psp_reference, p.attempts, p.created_at,
          p.captured_amount

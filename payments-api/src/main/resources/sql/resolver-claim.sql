-- Claims up to $1 due payments for the resolver, with a lease of $2 seconds (ResolverRepository.claim): automatic
-- ones PROCESSING (stuck) or UNKNOWN, manual ones whose PSP call (authorize, capture, void) is pending.
UPDATE payments p
   SET attempts = p.attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
 WHERE p.id IN (SELECT id FROM payments
                 WHERE status IN ('PROCESSING', 'UNKNOWN', 'AUTHORIZING', 'CAPTURING', 'CANCELING')
                   AND next_attempt_at <= now()
                 ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
   AND p.status IN ('PROCESSING', 'UNKNOWN', 'AUTHORIZING', 'CAPTURING', 'CANCELING')
RETURNING p.id, p.merchant_id, p.status, p.amount, p.currency, p.source, p.psp_reference, p.attempts, p.created_at,
          p.captured_amount

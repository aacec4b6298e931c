-- Claims up to $1 due payments for the resolver, with a lease of $2 seconds (ResolverRepository.claim).
UPDATE payments p
   SET attempts = p.attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
 WHERE p.id IN (SELECT id FROM payments
                 WHERE status IN ('PROCESSING', 'UNKNOWN') AND next_attempt_at <= now()
                 ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
   AND p.status IN ('PROCESSING', 'UNKNOWN')
RETURNING p.id, p.merchant_id, p.status, p.amount, p.currency, p.source, p.psp_reference, p.attempts, p.created_at

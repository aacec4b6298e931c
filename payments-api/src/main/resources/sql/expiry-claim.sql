-- Claims up to $2 AUTHORIZED payments authorized more than $1 seconds ago for the expiry job (ExpiryRepository.claim),
-- oldest first through V105's payments_expiry_due: the guarded move AUTHORIZED -> EXPIRING, as a capture's or
-- a cancel's start (PaymentRepository.startMove), so that of a racing capture, cancel and expiry exactly one finds the
-- row AUTHORIZED. SKIP LOCKED: rows another instance's claim or a starting capture holds are left to them.
-- next_attempt_at: when the resolver takes the void over if this process dies before its outcome is recorded ($3 s).
WITH due AS (SELECT id FROM payments
              WHERE status = 'AUTHORIZED' AND authorized_at <= now() - make_interval(secs => $1)
              ORDER BY authorized_at LIMIT $2 FOR UPDATE SKIP LOCKED)
UPDATE payments
   SET status = 'EXPIRING', last_error = NULL, next_attempt_at = now() + make_interval(secs => $3)
 WHERE id IN (SELECT id FROM due) AND status = 'AUTHORIZED'
   AND set_config('payments.actor', $4, true) IS NOT NULL
RETURNING id, merchant_id, order_id, amount, currency, status, refunded_amount, psp_reference, decline_code, created_at,
          metadata, capture_method, captured_amount, attempts

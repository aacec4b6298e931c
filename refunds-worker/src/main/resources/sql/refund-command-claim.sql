-- A refund command's deduplication check, look-up and claim in one statement (RefundRepository.claimForCommand,
-- docs/refunds.md): nothing is read or claimed when consumer $1 applied event $2 before. Claims refund $3 (counts the
-- attempt, takes the lease: next_attempt_at = now() + $4 ms) only while it is PENDING, no lease or scheduled retry holds
-- it, and it agrees with the command ($5 payment, $6 merchant, $7 amount, $8 currency, $9 charge). Always one row.
WITH applied AS (SELECT FROM consumed_events WHERE consumer = $1 AND event_id = $2),
found AS (
    SELECT r.id, r.payment_id, r.merchant_id, r.amount, r.currency, r.status, r.attempts,
           p.psp_reference AS charge_reference
      FROM refunds r JOIN payments p ON p.id = r.payment_id
     WHERE r.id = $3 AND NOT EXISTS (SELECT FROM applied)),
claimed AS (
    UPDATE refunds r SET attempts = r.attempts + 1,
                         next_attempt_at = now() + interval '1 millisecond' * $4::bigint
      FROM found f
     WHERE r.id = f.id AND r.status = 'PENDING'
       -- coalesce, not "IS NULL OR <=": the OR lets the planner read the partial indexes of all PENDING refunds
       -- (V30, V103: the whole backlog) instead of the primary key
       AND coalesce(r.next_attempt_at, '-infinity') <= now()
       AND f.payment_id = $5 AND f.merchant_id = $6 AND f.amount = $7 AND f.currency = $8
       AND f.charge_reference IS NOT DISTINCT FROM $9
    RETURNING r.attempts)
SELECT EXISTS (SELECT FROM applied) AS applied, EXISTS (SELECT FROM claimed) AS claimed,
       f.id, f.payment_id, f.merchant_id, f.amount, f.currency, f.status,
       coalesce((SELECT attempts FROM claimed), f.attempts) AS attempts, f.charge_reference
  FROM (VALUES (1)) AS one (x) LEFT JOIN found f ON true

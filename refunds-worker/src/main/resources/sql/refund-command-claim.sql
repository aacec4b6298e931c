-- Refund commands' deduplication checks, look-ups and claims in one statement (RefundRepository.claimForCommands,
-- docs/refunds.md), for one or many commands ($1 to $7: one array element each), one output row per command in their
-- order. Nothing is read or claimed for a command whose event consumer $8 applied before. A command's refund is
-- claimed (the attempt counted, the lease taken: next_attempt_at = now() + $9 ms) only while it is PENDING, no lease
-- or scheduled retry holds it, and it agrees with the command (payment, merchant, amount, currency, charge). A refund
-- must not appear twice in one statement: its second row would find it claimed by the first (the caller keeps them
-- apart).
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::int8[], $6::text[], $7::text[])
        WITH ORDINALITY AS t (event_id, refund_id, payment_id, merchant_id, amount, currency, charge_reference, n)),
fresh AS (
    SELECT i.n, i.refund_id FROM input i
     WHERE NOT EXISTS (SELECT FROM consumed_events c WHERE c.consumer = $8 AND c.event_id = i.event_id)),
found AS (
    SELECT f.n, r.id, r.payment_id, r.merchant_id, r.amount, r.currency, r.status, r.attempts,
           p.psp_reference AS charge_reference
      FROM fresh f JOIN refunds r ON r.id = f.refund_id JOIN payments p ON p.id = r.payment_id),
claimed AS (
    UPDATE refunds r SET attempts = r.attempts + 1,
                         next_attempt_at = now() + interval '1 millisecond' * $9::bigint
      FROM found f JOIN input i ON i.n = f.n
     WHERE r.id = f.id AND r.status = 'PENDING'
       -- coalesce, not "IS NULL OR <=": the OR lets the planner read the partial indexes of all PENDING refunds
       -- (V30, V103: the whole backlog) instead of the primary key
       AND coalesce(r.next_attempt_at, '-infinity') <= now()
       AND f.payment_id = i.payment_id AND f.merchant_id = i.merchant_id AND f.amount = i.amount
       AND f.currency = i.currency AND f.charge_reference IS NOT DISTINCT FROM i.charge_reference
    RETURNING f.n, r.attempts)
SELECT fr.n IS NULL AS applied, c.n IS NOT NULL AS claimed,
       f.id, f.payment_id, f.merchant_id, f.amount, f.currency, f.status,
       coalesce(c.attempts, f.attempts) AS attempts, f.charge_reference
  FROM input i LEFT JOIN fresh fr ON fr.n = i.n LEFT JOIN found f ON f.n = i.n LEFT JOIN claimed c ON c.n = i.n
 ORDER BY i.n

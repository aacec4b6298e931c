-- The match of one business date (ReconRepository.match, docs/reconciler.md): our captured payments and successful
-- refunds of the date, widened by the window on both sides, FULL OUTER JOIN the CHARGE, REFUND, CHARGEBACK (a dispute)
-- and REFUND_FAILURE lines of the date's file, classified into outcomes. A CHARGEBACK or REFUND_FAILURE line has no
-- row of ours to join (we record no disputes, and a failed refund is not SUCCEEDED): it is classified by what we hold
-- under its reference. The three parameters are bound once, in params.
-- A payment's settled amount is what it captured, coalesce(captured_amount, amount): a manual capture of less than the
-- authorization settles at the captured amount. Only CAPTURED payments are ours to settle: an authorization (and its
-- cancel or expiry) moves no money and is never in a file, so AUTHORIZED, CANCELED, EXPIRED and the in-flight states
-- are never MISSING_AT_PSP; a line for one of them is a STATUS_MISMATCH (docs/reconciler.md).
CREATE TEMP TABLE recon_result ON COMMIT DROP AS
WITH params AS (
    SELECT business_date, match_window, late_resolution_days,
           business_date::timestamp AT TIME ZONE 'UTC' AS day_start,
           (business_date + 1)::timestamp AT TIME ZONE 'UTC' AS day_end
      FROM (VALUES (?::date, make_interval(secs => ?::float8), ?::int))
           AS v (business_date, match_window, late_resolution_days)
), ours AS (
    SELECT 'CHARGE'::text AS kind, p.id::text AS reference, coalesce(p.captured_amount, p.amount) AS amount,
           p.currency::text AS currency, p.captured_at AS at
      FROM payments p, params
     WHERE p.status = 'CAPTURED'
       AND p.captured_at >= params.day_start - params.match_window AND p.captured_at < params.day_end
    UNION ALL
    SELECT 'REFUND', r.id::text, r.amount, r.currency::text, r.completed_at
      FROM refunds r, params
     WHERE r.status = 'SUCCEEDED'
       AND r.completed_at >= params.day_start - params.match_window AND r.completed_at < params.day_end
), theirs AS (
    SELECT s.type AS kind, s.reference, s.psp_reference, s.amount, s.currency::text AS currency,
           s.settled_at, count(*) OVER (PARTITION BY s.type, s.reference) AS copies
      FROM psp_settlements s, params
     WHERE s.business_date = params.business_date
       AND s.type IN ('CHARGE', 'REFUND', 'CHARGEBACK', 'REFUND_FAILURE')
), joined AS (
    SELECT coalesce(o.kind, t.kind) AS kind, coalesce(o.reference, t.reference) AS reference,
           o.amount AS internal_amount, o.currency AS internal_currency, o.at AS internal_at,
           t.psp_reference, t.amount AS psp_amount, t.currency AS psp_currency, t.settled_at, t.copies
      FROM ours o
      FULL OUTER JOIN theirs t ON t.kind = o.kind AND t.reference = o.reference
)
SELECT j.*, x.status AS internal_status, x.amount AS other_amount, x.currency AS other_currency,
       CASE
         WHEN j.copies > 1 THEN 'DUPLICATE_AT_PSP'
         WHEN j.internal_amount IS NOT NULL AND j.psp_amount IS NOT NULL THEN
           CASE WHEN j.internal_currency <> j.psp_currency THEN 'CURRENCY_MISMATCH'
                WHEN j.internal_amount <> j.psp_amount THEN 'AMOUNT_MISMATCH'
                ELSE 'MATCHED' END
         -- ours only: an item near midnight may be in the neighbouring file
         WHEN j.psp_amount IS NULL THEN
           CASE WHEN j.internal_at >= params.day_end - params.match_window THEN
                  CASE WHEN EXISTS (SELECT 1 FROM psp_settlements a
                                     WHERE a.reference = j.reference AND a.type = j.kind
                                       AND a.business_date = params.business_date + 1)
                       THEN 'IN_ADJACENT_FILE' ELSE 'AWAITING_NEXT_FILE' END
                WHEN j.internal_at < params.day_start + params.match_window
                     AND EXISTS (SELECT 1 FROM psp_settlements a
                                  WHERE a.reference = j.reference AND a.type = j.kind
                                    AND a.business_date = params.business_date - 1)
                  THEN 'IN_ADJACENT_FILE'
                -- recorded late (captured_at is when we learned the outcome): an earlier file settled the same amount
                WHEN EXISTS (SELECT 1 FROM psp_settlements a
                              WHERE a.reference = j.reference AND a.type = j.kind
                                AND a.business_date >= params.business_date - params.late_resolution_days
                                AND a.business_date < params.business_date
                                AND a.amount = j.internal_amount
                                AND a.currency::text = j.internal_currency)
                  THEN 'SETTLED_EARLIER'
                ELSE 'MISSING_AT_PSP' END
         -- theirs only: what do we hold under that reference, whatever its day or status?
         WHEN x.status IS NULL THEN 'MISSING_INTERNAL'
         -- the PSP took the money of a payment back: our books still hold it captured
         WHEN j.kind = 'CHARGEBACK' THEN 'CHARGEBACK'
         -- a refund that failed after the PSP booked it: its money came back; right if we hold the refund FAILED
         WHEN j.kind = 'REFUND_FAILURE' THEN
           CASE WHEN x.status = 'FAILED' THEN 'REFUND_REVERSED' ELSE 'STATUS_MISMATCH' END
         WHEN j.kind = 'REFUND' AND x.status = 'FAILED'
              AND EXISTS (SELECT 1 FROM psp_settlements a
                           WHERE a.reference = j.reference AND a.type = 'REFUND_FAILURE'
                             AND a.amount = j.psp_amount AND a.currency::text = j.psp_currency)
           THEN 'REFUND_REVERSED'
         WHEN x.status IN ('CAPTURED', 'SUCCEEDED') THEN
           CASE WHEN x.currency <> j.psp_currency THEN 'CURRENCY_MISMATCH'
                WHEN x.amount <> j.psp_amount THEN 'AMOUNT_MISMATCH'
                ELSE 'MATCHED_OUTSIDE_WINDOW' END
         WHEN j.kind = 'CHARGE' AND x.status = 'UNKNOWN' AND x.amount = j.psp_amount
              AND x.currency = j.psp_currency
              AND (x.psp_reference IS NULL OR x.psp_reference = j.psp_reference)
           THEN 'SETTLED_UNKNOWN'
         ELSE 'STATUS_MISMATCH'
       END AS outcome
  FROM joined j
 CROSS JOIN params
  LEFT JOIN LATERAL (
      SELECT p.status, coalesce(p.captured_amount, p.amount) AS amount, p.currency::text AS currency,
             p.psp_reference
        FROM payments p
       WHERE j.kind IN ('CHARGE', 'CHARGEBACK') AND j.internal_amount IS NULL AND p.id = try_uuid(j.reference)
      UNION ALL
      SELECT r.status, r.amount, r.currency::text, r.psp_reference
        FROM refunds r
       WHERE j.kind IN ('REFUND', 'REFUND_FAILURE') AND j.internal_amount IS NULL AND r.id = try_uuid(j.reference)
  ) x ON true

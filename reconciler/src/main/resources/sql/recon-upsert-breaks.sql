-- Records a run's breaks (ReconRepository.upsertBreaks, docs/reconciler.md "Debounce"): 1 business date, 2 and 3 the
-- run id, 4 the break types, 5 and 7 the previous successful run of the date, 6 and 8 recon.report-after in ms.
INSERT INTO recon_breaks AS b (business_date, break_type, reference, psp_reference, internal_amount,
                               psp_amount, currency, first_run_id, last_run_id, opened_at)
SELECT DISTINCT ON (outcome, reference) ?, outcome, reference, psp_reference,
       coalesce(internal_amount, other_amount), psp_amount, coalesce(psp_currency, internal_currency),
       ?, ?, now()
  FROM recon_result
 WHERE outcome = ANY (?)
 ORDER BY outcome, reference, psp_reference
ON CONFLICT (business_date, break_type, reference) DO UPDATE SET
    psp_reference = EXCLUDED.psp_reference,
    internal_amount = EXCLUDED.internal_amount,
    psp_amount = EXCLUDED.psp_amount,
    currency = EXCLUDED.currency,
    times_seen = b.times_seen + 1,
    last_run_id = EXCLUDED.last_run_id,
    status = CASE WHEN b.status = 'REPORTED' THEN 'REPORTED'
                  WHEN b.status = 'OPEN' AND b.last_run_id = ?
                       AND b.opened_at <= now() - ? * interval '1 millisecond' THEN 'REPORTED'
                  ELSE 'OPEN' END,
    reported_at = CASE WHEN b.status = 'REPORTED' THEN b.reported_at
                       WHEN b.status = 'OPEN' AND b.last_run_id = ?
                            AND b.opened_at <= now() - ? * interval '1 millisecond' THEN now() END,
    opened_at = CASE WHEN b.status = 'RESOLVED' THEN now() ELSE b.opened_at END,
    resolved_at = NULL,
    resolution = NULL

-- Reconciler (issue 8): what the daily match needs beyond V1.

-- Our side of the match: successful refunds by completion time (captured payments already have
-- payments_captured_at).
CREATE INDEX refunds_completed_at ON refunds (completed_at) WHERE status = 'SUCCEEDED';

-- Adjacent-file lookups of the midnight cut-off are by (type, reference) within a few dates.
DROP INDEX psp_settlements_reference;
CREATE INDEX psp_settlements_reference ON psp_settlements (reference, type, business_date);

-- The break types the reconciler writes (docs/reconciler.md); the table is empty before this release.
ALTER TABLE recon_breaks ADD CONSTRAINT recon_breaks_type CHECK (break_type IN (
    'MISSING_INTERNAL', 'MISSING_AT_PSP', 'AMOUNT_MISMATCH', 'CURRENCY_MISMATCH', 'STATUS_MISMATCH',
    'DUPLICATE_AT_PSP'));
-- Closing breaks that did not show in a run: the open breaks of one date.
CREATE INDEX recon_breaks_open ON recon_breaks (business_date) WHERE status IN ('OPEN', 'REPORTED');

-- Debounce compares with the previous successful run of the same date.
CREATE INDEX recon_runs_date_status ON recon_runs (business_date, status, id);

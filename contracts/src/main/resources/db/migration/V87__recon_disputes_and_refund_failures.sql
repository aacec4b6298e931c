-- Reconciliation on the PSP port (issue 20): Stripe's balance transactions bring two more kinds of settlement line.
-- REFUND_FAILURE: a refund that failed after the PSP booked it (its money came back to the balance).
ALTER TABLE psp_settlements DROP CONSTRAINT psp_settlements_type_check;
ALTER TABLE psp_settlements ADD CONSTRAINT psp_settlements_type_check
    CHECK (type IN ('CHARGE', 'REFUND', 'CHARGEBACK', 'FEE', 'REFUND_FAILURE'));

-- CHARGEBACK: a dispute (chargeback) line of a payment we hold; our books still count the money as captured.
ALTER TABLE recon_breaks DROP CONSTRAINT recon_breaks_type;
ALTER TABLE recon_breaks ADD CONSTRAINT recon_breaks_type CHECK (break_type IN (
    'MISSING_INTERNAL', 'MISSING_AT_PSP', 'AMOUNT_MISMATCH', 'CURRENCY_MISMATCH', 'STATUS_MISMATCH',
    'DUPLICATE_AT_PSP', 'CHARGEBACK'));

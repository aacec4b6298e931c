-- One way to settle a refund (issue 41): refunds-worker (the PSP's answer to its call) and payments-api (a PSP webhook)
-- both call settle_refund, so the guarded PENDING -> SUCCEEDED/FAILED update, the release of the reservation, the
-- ledger booking and the RefundSucceeded/RefundFailed event exist once (docs/operations.md, "One writer per table").
--
-- In one call, only for a refund that is still PENDING (the guarded update decides: of two concurrent callers the
-- second waits for the first's row lock, then finds the refund final and changes nothing):
--   SUCCEEDED: one REFUND ledger transaction, merchant_payable +amount and psp_receivable -amount (book_ledger_transaction);
--   FAILED:    the reservation on the payment is given back (the CHECKs on payments stop a release below zero);
--   both:      the refund's OPEN operations items about it being stuck PENDING are resolved with
--              '<p_actor>: <status>', and the event goes to payment-events through enqueue_event, keyed by the
--              payment, with the fields of contracts' RefundSucceeded / RefundFailed and the caller's trace headers.
-- Returns true when this call settled the refund, false when it was not PENDING (or does not exist).
CREATE FUNCTION settle_refund(p_refund_id uuid, p_status text, p_psp_reference text, p_failure_code text,
                              p_actor text, p_headers jsonb) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    r        refunds%ROWTYPE;
    event_id uuid := gen_random_uuid();
    payload  jsonb;
BEGIN
    IF p_status IS NULL OR p_status NOT IN ('SUCCEEDED', 'FAILED') THEN
        RAISE EXCEPTION 'a refund settles as SUCCEEDED or FAILED, not %', p_status
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    UPDATE refunds SET status = p_status, psp_reference = coalesce(p_psp_reference, psp_reference),
                       failure_code = coalesce(p_failure_code, failure_code), completed_at = now(),
                       next_attempt_at = NULL, last_error = NULL
     WHERE id = p_refund_id AND status = 'PENDING'
    RETURNING * INTO r;
    IF NOT FOUND THEN
        RETURN false;
    END IF;

    IF p_status = 'SUCCEEDED' THEN
        PERFORM book_ledger_transaction('REFUND', 'merchant_payable', 'psp_receivable', r.id::text, r.merchant_id,
                                        'refund of payment ' || r.payment_id, r.amount, r.currency, false);
    ELSE
        UPDATE payments SET refunded_amount = refunded_amount - r.amount WHERE id = r.payment_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'no payment % to release refund % on', r.payment_id, r.id;
        END IF;
    END IF;

    UPDATE operations_queue
       SET status = 'RESOLVED', resolved_at = now(),
           details = details || jsonb_build_object('resolution', p_actor || ': ' || p_status)
     WHERE subject_type = 'refund' AND subject_id = r.id::text
       AND reason IN ('refund_pending_too_long', 'refund_rejected_by_psp') AND status = 'OPEN';

    payload := jsonb_build_object(
        'eventId', event_id,
        'type', CASE p_status WHEN 'SUCCEEDED' THEN 'RefundSucceeded' ELSE 'RefundFailed' END,
        'refundId', r.id,
        'paymentId', r.payment_id,
        'merchantId', r.merchant_id,
        'amount', r.amount,
        'currency', r.currency,
        'occurredAt', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'metadata', r.metadata)
        || CASE p_status WHEN 'SUCCEEDED' THEN jsonb_build_object('pspReference', r.psp_reference)
                         ELSE jsonb_build_object('failureCode', r.failure_code) END;
    PERFORM enqueue_event(event_id, payload ->> 'type', 'payment-events', r.payment_id::text, payload, p_headers);
    RETURN true;
END $$;

-- The services call it as payments_app (V79's default privileges grant it too; said here so it does not depend on them).
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'payments_app') THEN
        GRANT EXECUTE ON FUNCTION settle_refund(uuid, text, text, text, text, jsonb) TO payments_app;
    END IF;
END
$$;

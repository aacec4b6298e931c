-- Records PSP outcomes of payments, for a batch in one statement (PaymentRepository.recordOutcomes). $1..$13 and
-- $15..$19: one array element per outcome; $14: the actor for payment_transitions.
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                         $7::uuid[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int4[], $13::bytea[],
                         $15::text[], $16::int4[], $17::timestamptz[], $18::int4[], $19::text[])
        AS t (id, status, psp_reference, decline_code, last_error, allowed_from,
              event_id, event_type, topic, payload, headers, response_status, response_body,
              call_kind, call_attempt, call_started_at, call_ms, call_outcome)),
moved AS (
    UPDATE payments p
       SET status = input.status,
           charge_ms = CASE WHEN input.call_kind = 'charge' AND input.call_attempt = 0 AND input.status = 'CAPTURED'
                            THEN input.call_ms ELSE p.charge_ms END,
           psp_reference = COALESCE(input.psp_reference, p.psp_reference),
           decline_code = input.decline_code,
           last_error = input.last_error,
           captured_at = CASE WHEN input.status = 'CAPTURED' THEN now() ELSE p.captured_at END,
           -- an outcome still unknown (UNKNOWN, or a manual PSP call's pending state kept): the resolver's, now
           next_attempt_at = CASE WHEN input.status IN ('UNKNOWN', 'AUTHORIZING', 'CAPTURING', 'CANCELING', 'EXPIRING')
                                  THEN now()
                                  ELSE NULL END
      FROM input
     WHERE p.id = input.id AND p.status = ANY (string_to_array(input.allowed_from, ','))
       AND set_config('payments.actor', $14, true) IS NOT NULL
     -- the amount captured: a manual capture's captured_amount, else the whole amount (the ledger books it)
     RETURNING p.id, p.merchant_id, coalesce(p.captured_amount, p.amount) AS amount, p.currency, p.status,
               p.capture_method),
-- The PSP call each outcome came from (the console's story), whether or not the outcome still applies: the call
-- was made. The capture's own charge that moved its payment to CAPTURED goes on the payment row instead (charge_ms,
-- V97: no row of its own); every other call gets a psp_calls row. A data-modifying WITH runs even though nothing
-- reads it.
psp_call AS (
    INSERT INTO psp_calls (payment_id, kind, attempt, started_at, duration_ms, outcome)
    SELECT id, call_kind, call_attempt, call_started_at, call_ms, call_outcome FROM input
     WHERE call_kind IS NOT NULL
       AND NOT (call_kind = 'charge' AND call_attempt = 0 AND status = 'CAPTURED'
                AND id IN (SELECT moved.id FROM moved))),
-- The two writers (V78) take the whole batch at once and answer one row each.
ledger AS (
    SELECT book_ledger_transactions('CAPTURE', 'psp_receivable', 'merchant_payable', array_agg(id::text),
                                    array_agg(merchant_id), array_agg('payment captured'::text), array_agg(amount),
                                    array_agg(currency::text), false)
      FROM moved WHERE status = 'CAPTURED'),
event AS (
    SELECT enqueue_events(array_agg(input.event_id), array_agg(input.event_type), array_agg(input.topic),
                          array_agg(moved.id::text), array_agg(input.payload::jsonb), array_agg(input.headers::jsonb))
      FROM moved JOIN input ON input.id = moved.id WHERE input.event_id IS NOT NULL),
completed AS (
    UPDATE idempotency_keys k
       SET status = 'COMPLETED', response_status = input.response_status,
           response_body = input.response_body, completed_at = now(),
           final_at = CASE WHEN moved.status IN ('CAPTURED', 'FAILED', 'AUTHORIZED', 'CANCELED') THEN now() END
      FROM moved JOIN input ON input.id = moved.id
     WHERE k.resource_type = 'payment' AND k.resource_id = moved.id AND k.status = 'IN_PROGRESS'
       AND k.final_at IS NULL),
-- A manual capture's or cancel's key completed with a 202 before its outcome (the PSP's answer was lost) becomes final
-- now (V73's rule; its trigger covers UNKNOWN -> CAPTURED/FAILED only, V98's the authorization).
finalized AS (
    UPDATE idempotency_keys k SET final_at = now()
      FROM moved
     WHERE moved.capture_method = 'MANUAL' AND moved.status IN ('CAPTURED', 'CANCELED')
       AND k.resource_type = 'payment' AND k.resource_id = moved.id AND k.status = 'COMPLETED'
       AND k.final_at IS NULL)
-- Joining the one-row ledger and event makes PostgreSQL run them (a SELECT in WITH runs only when read).
SELECT moved.id FROM moved, ledger, event

-- The refund reservations and their effects in one statement (RefundRepository.reserve, docs/api.md): $1..$16, one
-- array element per reservation. A payment's refunds are bounded by what was captured: coalesce(captured_amount,
-- amount) (V98: the amount of a manual capture, NULL on automatic payments, which capture their whole amount).
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int8[], $4::uuid[], $5::text[], $6::text[], $7::text[],
                         $8::uuid[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[],
                         $14::bytea[], $15::bytea[], $16::text[])
        AS t (payment_id, merchant_id, amount, refund_id, currency, psp_reference, reason,
              event_id, event_type, topic, payload, headers, key, request_hash, response_body, metadata)),
reserved AS (
    UPDATE payments p SET refunded_amount = p.refunded_amount + input.amount
      FROM input
     WHERE p.id = input.payment_id AND p.merchant_id = input.merchant_id AND p.status = 'CAPTURED'
       AND p.refunded_amount + input.amount <= coalesce(p.captured_amount, p.amount)
       AND p.currency = input.currency AND p.psp_reference = input.psp_reference
     RETURNING input.*),
refund AS (
    INSERT INTO refunds (id, payment_id, merchant_id, amount, currency, reason, metadata)
    SELECT refund_id, payment_id, merchant_id, amount, currency, reason, metadata::jsonb FROM reserved
    RETURNING id, payment_id),
command AS (
    SELECT enqueue_events(array_agg(r.event_id), array_agg(r.event_type), array_agg(r.topic),
                          array_agg(r.payment_id::text), array_agg(r.payload::jsonb),
                          array_agg(r.headers::jsonb)) AS enqueued
      FROM reserved r JOIN refund ON refund.id = r.refund_id),
claim AS (
    INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id, status,
                                  response_status, response_body, completed_at)
    SELECT r.merchant_id, r.key, r.request_hash, 'refund', r.refund_id, 'COMPLETED', 202, r.response_body,
           now()
      FROM reserved r JOIN refund ON refund.id = r.refund_id)
-- Reading command makes PostgreSQL run it (a SELECT in WITH runs only when read).
SELECT refund_id FROM reserved LEFT JOIN command ON true

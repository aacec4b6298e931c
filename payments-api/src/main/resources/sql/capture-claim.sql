-- Claims each payment's Idempotency-Key and inserts the payment PROCESSING (AUTHORIZING when its capture method is
-- MANUAL), for a batch of captures in one statement (PaymentRepository.insertProcessingClaimingKeys). $1..$8, $10 and
-- $11: one array element per payment; $9: stuck-after seconds.
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int8[], $5::text[], $6::text[], $7::text[],
                         $8::bytea[], $10::text[], $11::text[])
        AS t (id, merchant_id, order_id, amount, currency, source, key, request_hash, metadata, capture_method)),
claim AS (
    INSERT INTO idempotency_keys (merchant_id, key, request_hash, resource_type, resource_id)
    SELECT merchant_id, key, request_hash, 'payment', id FROM input ORDER BY merchant_id, key
    ON CONFLICT DO NOTHING RETURNING resource_id)
INSERT INTO payments (id, merchant_id, order_id, amount, currency, source, metadata, next_attempt_at, capture_method,
                      status)
SELECT input.id, input.merchant_id, input.order_id, input.amount, input.currency, input.source, input.metadata::jsonb,
       now() + make_interval(secs => $9::float8), input.capture_method,
       CASE input.capture_method WHEN 'MANUAL' THEN 'AUTHORIZING' ELSE 'PROCESSING' END
  FROM claim JOIN input ON input.id = claim.resource_id
RETURNING id, merchant_id, order_id, amount, currency, status, refunded_amount, psp_reference, decline_code, created_at,
          metadata, capture_method, captured_amount

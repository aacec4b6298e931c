-- payments-api capture path (issue 4).
-- Outcome recording completes the idempotency key of a payment by its resource id (the resolver and the webhook
-- path know the payment, not the key): a partial index keeps that lookup to the few keys still in progress.
CREATE INDEX idempotency_keys_in_progress_resource ON idempotency_keys (resource_type, resource_id)
    WHERE status = 'IN_PROGRESS';

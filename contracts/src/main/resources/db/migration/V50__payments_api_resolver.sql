-- payments-api resolver of UNKNOWN / stuck payments and PSP webhooks (issue 5). See docs/resolver.md.

-- The resolver claims due payments through payments_unresolved (V1: next_attempt_at of PROCESSING/UNKNOWN).
-- Its metrics read the number and age of UNKNOWN payments and the open operations items: small partial indexes.
CREATE INDEX payments_unknown_created ON payments (created_at) WHERE status = 'UNKNOWN';
CREATE INDEX operations_queue_open ON operations_queue (created_at) WHERE status = 'OPEN';

-- What the webhook handler did with a stored event (docs/resolver.md, "Webhooks").
ALTER TABLE psp_webhook_events ADD CONSTRAINT psp_webhook_events_outcome CHECK (outcome IN (
    'applied', 'no_change', 'conflict', 'unknown_payment', 'unknown_refund', 'ignored'));

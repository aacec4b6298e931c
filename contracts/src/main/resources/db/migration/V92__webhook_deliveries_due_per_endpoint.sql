-- webhook-delivery leases each endpoint's due deliveries separately (a bounded number per endpoint, fairly across
-- endpoints: docs/webhook-delivery.md "Concurrency"); this index finds an endpoint's due deliveries, oldest first.
CREATE INDEX webhook_deliveries_due_per_endpoint ON webhook_deliveries (endpoint_id, next_attempt_at)
    WHERE status = 'PENDING';

-- An event's createdAt (the feed's and the webhook body's) orders one payment's events (refund events included: their
-- outbox key is the payment id), so a receiver can drop a stale one (docs/webhook-delivery.md "Order"). The outbox row's
-- created_at is its transaction's start (now()), which can be earlier than that of an event another transaction of the
-- same payment committed meanwhile. This trigger runs after outbox_order_by_key (V10) took the key's lock, which a
-- second writer of the payment only gets once the first committed: the clock read here is later than every earlier
-- event of the payment.
CREATE OR REPLACE FUNCTION outbox_to_merchant_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Every payment event names its merchant; one that does not has no feed to go to.
    IF NEW.payload ? 'merchantId' THEN
        INSERT INTO merchant_events (id, merchant_id, type, payload, created_at)
        VALUES (NEW.event_id, (NEW.payload ->> 'merchantId')::uuid, NEW.event_type, NEW.payload, clock_timestamp())
        ON CONFLICT (id) DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;

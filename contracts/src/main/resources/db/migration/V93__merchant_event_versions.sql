-- Each merchant event carries its payment's version and the payment's state when it was written (issue 24; docs/api.md
-- "Events", docs/webhooks.md "Order"): webhooks may arrive in any order, and a receiver keeps, per payment, the event
-- with the highest version and drops lower ones.
--
-- The version is a per-payment counter, +1 per event of the payment (refund events included: they name their payment).
-- It lives in its own table, not in max(merchant_events.version), so that the feed's 30-day retention, which deletes
-- old events, cannot make a payment's counter start again. Its row lock serialises the writers of one payment (as the
-- outbox key lock of V10 already does): two concurrent events of a payment get consecutive, distinct versions.
CREATE TABLE payment_event_versions (
    payment_id uuid   PRIMARY KEY,                             -- no foreign key: the counter outlives what it counts
    version    bigint NOT NULL CHECK (version > 0)
);

ALTER TABLE merchant_events
    ADD COLUMN payment_id uuid,
    ADD COLUMN version    bigint,
    -- the payment as it was when the event was written: {"id","status","amount","currency","refundedAmount"};
    -- null only when the payment row was gone by then
    ADD COLUMN payment    jsonb;

-- Backfill: the existing events of each payment numbered in feed order, the counters seeded with the last number.
-- Older events have no state to recover: their payment stays null.
UPDATE merchant_events m
   SET payment_id = (m.payload ->> 'paymentId')::uuid
 WHERE m.payload ? 'paymentId';
-- Rows without a paymentId (none are written by the services: every payment-events type carries one) go: an event a
-- receiver cannot order has no place in the feed.
DELETE FROM merchant_events WHERE payment_id IS NULL;
UPDATE merchant_events m
   SET version = n.version
  FROM (SELECT id, row_number() OVER (PARTITION BY payment_id ORDER BY created_at, id) AS version
          FROM merchant_events) n
 WHERE m.id = n.id;
INSERT INTO payment_event_versions (payment_id, version)
SELECT payment_id, max(version) FROM merchant_events GROUP BY payment_id;

ALTER TABLE merchant_events
    ALTER COLUMN payment_id SET NOT NULL,
    ALTER COLUMN version SET NOT NULL,
    ADD CONSTRAINT merchant_events_payment_version UNIQUE (payment_id, version);

-- V92's function, plus the payment id, the version and the payment's state. An event already in the feed (the same
-- event id) takes no version.
CREATE OR REPLACE FUNCTION outbox_to_merchant_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    event_payment uuid;
    event_version bigint;
    state         jsonb;
BEGIN
    -- Every payment event names its merchant and its payment; one that does not has no feed to go to.
    IF NOT (NEW.payload ? 'merchantId' AND NEW.payload ? 'paymentId') THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT FROM merchant_events WHERE id = NEW.event_id) THEN
        RETURN NULL;
    END IF;
    event_payment := (NEW.payload ->> 'paymentId')::uuid;
    INSERT INTO payment_event_versions AS v (payment_id, version)
    VALUES (event_payment, 1)
    ON CONFLICT (payment_id) DO UPDATE SET version = v.version + 1
    RETURNING v.version INTO event_version;
    SELECT jsonb_build_object('id', p.id, 'status', p.status, 'amount', p.amount, 'currency', p.currency,
                              'refundedAmount', p.refunded_amount)
      INTO state
      FROM payments p
     WHERE p.id = event_payment;
    INSERT INTO merchant_events (id, merchant_id, type, payload, created_at, payment_id, version, payment)
    VALUES (NEW.event_id, (NEW.payload ->> 'merchantId')::uuid, NEW.event_type, NEW.payload, clock_timestamp(),
            event_payment, event_version, state);
    RETURN NULL;
END
$$;

-- The application role (V79): the outbox's writers run the trigger, which reads and bumps the counter; nothing deletes
-- a counter.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'payments_app') THEN
        GRANT SELECT, INSERT, UPDATE ON payment_event_versions TO payments_app;
    END IF;
END
$$;

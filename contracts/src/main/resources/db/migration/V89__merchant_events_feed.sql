-- The merchants' events feed (GET /v1/events, docs/api.md "Events"; issue 24): every record written for the
-- payment-events topic, kept for the feed's 30 days (payments-api's EventRetentionJob deletes older rows).
--
-- Filled by a trigger on the outbox, in the transaction that writes the event: whatever writes a payment event
-- (payments-api, refunds-worker), the feed holds exactly the events the topic gets, with the same ids, and no
-- writer can forget it.
CREATE TABLE merchant_events (
    id          uuid        PRIMARY KEY,                       -- the event's eventId (= outbox.event_id)
    merchant_id uuid        NOT NULL REFERENCES merchants (id),
    type        text        NOT NULL,
    payload     jsonb       NOT NULL,                          -- the event as published on Kafka
    created_at  timestamptz NOT NULL
);
-- The feed, newest first by (created_at, id), with and without ?type= (common/Page in payments-api).
CREATE INDEX merchant_events_feed ON merchant_events (merchant_id, created_at, id);
CREATE INDEX merchant_events_type_feed ON merchant_events (merchant_id, type, created_at, id);
-- Retention deletes the oldest first.
CREATE INDEX merchant_events_created ON merchant_events (created_at);

CREATE FUNCTION outbox_to_merchant_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Every payment event names its merchant; one that does not has no feed to go to.
    IF NEW.payload ? 'merchantId' THEN
        INSERT INTO merchant_events (id, merchant_id, type, payload, created_at)
        VALUES (NEW.event_id, (NEW.payload ->> 'merchantId')::uuid, NEW.event_type, NEW.payload, NEW.created_at)
        ON CONFLICT (id) DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER outbox_merchant_events AFTER INSERT ON outbox
    FOR EACH ROW WHEN (NEW.topic = 'payment-events') EXECUTE FUNCTION outbox_to_merchant_events();

-- The application role (V79): the outbox's writers insert through the trigger, payments-api reads the feed and
-- purges it; nothing updates an event.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'payments_app') THEN
        GRANT SELECT, INSERT, DELETE ON merchant_events TO payments_app;
    END IF;
END
$$;

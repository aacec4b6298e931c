-- The merchant events' per-payment version (V93, docs/api.md "Events") without a write per event (issue 38: the
-- capture path's cost). V93 bumped a counter row in payment_event_versions for every event: one more heap row and
-- index entry per capture, in a table that exists only to survive the feed's 30-day retention. The feed already
-- holds each payment's versions under the unique (payment_id, version) index, so the next version is read from
-- there: the highest of the payment's events still in the feed, or, once the retention has deleted them all, the
-- counter that the deletion left in payment_event_versions (below), + 1.
--
-- Serialised per payment as before, by a transaction-scoped advisory lock on the payment id instead of the counter
-- row's lock (no write, and the same lock as V10's outbox key lock when the key is the payment id, as design §6 has
-- it; also held when a writer uses another key): a second writer of the payment reads the highest version after the
-- first has committed (each statement of this volatile function takes a fresh snapshot in READ COMMITTED). The
-- unique (payment_id, version) constraint stays the backstop.
--
-- payment_event_versions keeps its rows and grants: rows written until this migration may be higher than what the
-- feed still holds, so the function takes the greater of both; a payment's row is only written now when the
-- retention deletes the last of its events (off the capture path, in the deleting statement's transaction, whatever
-- release runs the deletion).
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
    PERFORM pg_advisory_xact_lock(hashtextextended(event_payment::text, 0));
    SELECT coalesce(greatest((SELECT max(m.version) FROM merchant_events m WHERE m.payment_id = event_payment),
                             (SELECT v.version FROM payment_event_versions v WHERE v.payment_id = event_payment)),
                    0) + 1
      INTO event_version;
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

-- A deletion from the feed (the retention job) that takes a payment's last event keeps its highest version as the
-- payment's counter, so that a later event of the payment (a refund months after the capture) continues from it.
CREATE FUNCTION merchant_events_keep_versions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO payment_event_versions AS v (payment_id, version)
    SELECT gone.payment_id, max(gone.version)
      FROM gone
     WHERE NOT EXISTS (SELECT FROM merchant_events m WHERE m.payment_id = gone.payment_id)
     GROUP BY gone.payment_id
    ON CONFLICT (payment_id) DO UPDATE SET version = greatest(v.version, excluded.version);
    RETURN NULL;
END
$$;
CREATE TRIGGER merchant_events_keep_versions AFTER DELETE ON merchant_events
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION merchant_events_keep_versions();

-- refunds-worker (issue 7): deduplication of consumed Kafka events, and the index of the pending-refund sync.

-- One row per (consumer, event id) a consumer has applied, inserted in the same transaction as the change the
-- event caused: a redelivered event finds its row and changes nothing.
CREATE TABLE consumed_events (
    consumer    text        NOT NULL CHECK (length(consumer) BETWEEN 1 AND 100),
    event_id    uuid        NOT NULL,
    consumed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, event_id)
);
CREATE INDEX consumed_events_consumed_at ON consumed_events (consumed_at);

-- PENDING refunds that no one has scheduled yet (next_attempt_at NULL, as payments-api creates them): the sync
-- picks them up by age when their command was never executed. Scheduled ones use refunds_pending of V1.
CREATE INDEX refunds_pending_unscheduled ON refunds (created_at) WHERE status = 'PENDING' AND next_attempt_at IS NULL;

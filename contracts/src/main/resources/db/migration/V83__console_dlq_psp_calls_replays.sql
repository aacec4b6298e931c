-- What the operator console (docs/console.md) shows and the database did not record before (issue 25): the refund
-- commands refunds-worker dead-letters, each PSP call of a payment, and each replay of a payment's idempotency key.

-- A refund-commands record that refunds-worker sent to refund-commands-dlq (RefundCommandConsumer), written before
-- the record is dead-lettered, in the same step. One row per record (its source topic, partition and offset): a
-- record delivered again after a crash between this row and the dead-letter topic finds its row and adds none.
-- refund_id and payment_id are the command's when it parses, NULL for a record that does not.
CREATE TABLE refund_dead_letters (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic            text        NOT NULL CHECK (length(topic) BETWEEN 1 AND 249),
    kafka_partition  integer     NOT NULL CHECK (kafka_partition >= 0),
    kafka_offset     bigint      NOT NULL CHECK (kafka_offset >= 0),
    record_key       text        CHECK (length(record_key) <= 255),
    refund_id        uuid,
    payment_id       uuid,
    reason           text        NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
    dead_lettered_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (topic, kafka_partition, kafka_offset)
);
CREATE INDEX refund_dead_letters_at ON refund_dead_letters (dead_lettered_at);
CREATE INDEX refund_dead_letters_payment ON refund_dead_letters (payment_id) WHERE payment_id IS NOT NULL;

-- Each call payments-api made to the PSP for a payment: the capture's charge (attempt 0), and the resolver's
-- look-ups and re-sent charges (its attempt number). started_at is the service's clock when the call began;
-- duration_ms how long until the answer (or the failure). outcome: what came back, e.g. 'captured ch_…',
-- 'declined card_declined', 'not found', 'error TimeoutException', 'not sent ConnectException'.
-- The capture writes its row in the statement that records the outcome (record-outcome.sql), so a capture costs no
-- extra statement, one heap row and one index entry; the resolver writes its calls in its own transaction.
-- No primary key of its own (nothing refers to a call, nothing updates one): one index, by payment, for the story.
CREATE TABLE psp_calls (
    payment_id  uuid        NOT NULL REFERENCES payments (id),
    kind        text        NOT NULL CHECK (kind IN ('charge', 'lookup')),
    attempt     integer     NOT NULL CHECK (attempt >= 0),
    started_at  timestamptz NOT NULL,
    duration_ms integer     NOT NULL CHECK (duration_ms >= 0),
    outcome     text        NOT NULL CHECK (length(outcome) BETWEEN 1 AND 200)
);
CREATE INDEX psp_calls_payment ON psp_calls (payment_id, started_at);

-- Each later request under a payment's Idempotency-Key, written by the statement that reads the key back
-- (IdempotencyRepository.find): 'replayed' (same request, the stored answer or the payment's current state),
-- 'in_progress' (409) or 'different_request' (422). No foreign key: the key (or its payment) may be released by a
-- charge never sent at the same moment, and a replay must not fail for that; the rows go with their key's purge
-- and with a dropped payment (resource_id).
CREATE TABLE idempotency_replays (
    merchant_id     uuid        NOT NULL,
    key             text        NOT NULL,
    resource_id     uuid,
    answer          text        NOT NULL CHECK (answer IN ('replayed', 'in_progress', 'different_request')),
    response_status integer     CHECK (response_status BETWEEN 100 AND 599),
    at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idempotency_replays_resource ON idempotency_replays (resource_id);

-- What the services' login may do (V79, docs/deployment.md "Database roles"): dead letters and PSP calls are
-- append-only; replays are deleted with their key (retention purge, dropped payment).
-- Only where the role exists (V79: a single-login database has none).
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'payments_app') THEN
        GRANT SELECT, INSERT         ON refund_dead_letters TO payments_app;
        GRANT SELECT, INSERT         ON psp_calls           TO payments_app;
        GRANT SELECT, INSERT, DELETE ON idempotency_replays TO payments_app;
    END IF;
END
$$;

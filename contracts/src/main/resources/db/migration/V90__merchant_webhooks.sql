-- Webhooks to merchants (issue 24; docs/api.md "Webhook endpoints", docs/webhooks.md).
-- payments-api registers endpoints and their signing secrets; webhook-delivery fans every payment event out into one
-- delivery per subscribed endpoint and sends it, one row per attempt.

CREATE TABLE webhook_endpoints (
    id              uuid        PRIMARY KEY,
    merchant_id     uuid        NOT NULL REFERENCES merchants (id),
    url             text        NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    -- event types (PaymentCaptured, ...) or '*' for every type
    event_types     text[]      NOT NULL CHECK (cardinality(event_types) BETWEEN 1 AND 20),
    status          text        NOT NULL DEFAULT 'ENABLED' CHECK (status IN ('ENABLED', 'DISABLED', 'DELETED')),
    -- the first failed attempt since the last success; an endpoint failing for payments.webhooks.disable-after (3 days)
    -- is DISABLED with an operations item
    failing_since   timestamptz,
    disabled_reason text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'DISABLED') = (disabled_reason IS NOT NULL))
);
-- Fan-out looks up a merchant's live endpoints for every event.
CREATE INDEX webhook_endpoints_merchant ON webhook_endpoints (merchant_id, created_at, id) WHERE status <> 'DELETED';

-- Signing secrets: the current one (expires_at NULL) and, after a rotation, the old one until its grace period ends.
-- Deliveries are signed with every unexpired secret (one v1 signature each), as Standard Webhooks allows.
CREATE TABLE webhook_endpoint_secrets (
    endpoint_id uuid        NOT NULL REFERENCES webhook_endpoints (id),
    secret      text        NOT NULL CHECK (secret ~ '^whsec_[A-Za-z0-9+/]{32,}={0,2}$'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz,
    PRIMARY KEY (endpoint_id, secret)
);
CREATE UNIQUE INDEX webhook_endpoint_secrets_one_current ON webhook_endpoint_secrets (endpoint_id) WHERE expires_at IS NULL;

-- One event to one endpoint. origin 'event': the fan-out of the Kafka record (at most one per event and endpoint, so a
-- re-consumed record adds nothing); 'redeliver': POST /v1/events/{id}/redeliver (each call is a new delivery).
CREATE TABLE webhook_deliveries (
    id              uuid        PRIMARY KEY,
    endpoint_id     uuid        NOT NULL REFERENCES webhook_endpoints (id),
    event_id        uuid        NOT NULL,
    merchant_id     uuid        NOT NULL REFERENCES merchants (id),
    origin          text        NOT NULL CHECK (origin IN ('event', 'redeliver')),
    status          text        NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- when the next attempt is due (PENDING only); a sender leases a delivery by moving it forward
    next_attempt_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'PENDING') = (next_attempt_at IS NOT NULL))
);
CREATE UNIQUE INDEX webhook_deliveries_one_per_event ON webhook_deliveries (endpoint_id, event_id) WHERE origin = 'event';
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';
-- GET /v1/webhook_endpoints/{id}/deliveries, newest first by (created_at, id).
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at, id);

-- Every attempt, as it ended: insert-only.
CREATE TABLE webhook_delivery_attempts (
    delivery_id     uuid        NOT NULL REFERENCES webhook_deliveries (id),
    attempt         integer     NOT NULL CHECK (attempt >= 1),
    started_at      timestamptz NOT NULL,
    latency_ms      integer     NOT NULL CHECK (latency_ms >= 0),
    -- the receiver's HTTP status; NULL when no answer came (refused, timeout, connection error, SSRF refusal)
    response_code   integer     CHECK (response_code BETWEEN 100 AND 599),
    outcome         text        NOT NULL CHECK (outcome IN ('SUCCEEDED', 'FAILED')),
    error           text        CHECK (length(error) <= 500),
    next_attempt_at timestamptz,
    PRIMARY KEY (delivery_id, attempt)
);

ALTER TABLE operations_queue DROP CONSTRAINT operations_queue_subject_type_check;
ALTER TABLE operations_queue ADD CONSTRAINT operations_queue_subject_type_check
    CHECK (subject_type IN ('payment', 'refund', 'webhook', 'recon', 'webhook_endpoint'));

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'payments_app') THEN
        GRANT SELECT, INSERT, UPDATE ON webhook_endpoints, webhook_deliveries TO payments_app;
        GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoint_secrets TO payments_app;
        GRANT SELECT, INSERT ON webhook_delivery_attempts TO payments_app;
    END IF;
END
$$;

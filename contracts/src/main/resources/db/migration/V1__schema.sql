-- Schema v1 of the payments platform: one schema shared by all services, owned by these migrations.
-- Invariants of design.md §7 that the database can hold live here, not in Java.

-- Merchants and their API keys (only the SHA-256 hash of a key is stored).
CREATE TABLE merchants (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                  text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    status                text        NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'SUSPENDED')),
    rate_limit_per_second integer     NOT NULL DEFAULT 100 CHECK (rate_limit_per_second > 0),
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE merchant_api_keys (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id uuid        NOT NULL REFERENCES merchants (id),
    key_hash    bytea       NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    key_prefix  text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX merchant_api_keys_merchant ON merchant_api_keys (merchant_id);

-- Payments. Status follows the state machine enforced by payments_guard_transition below.
CREATE TABLE payments (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id     uuid        NOT NULL REFERENCES merchants (id),
    order_id        text        NOT NULL CHECK (length(order_id) BETWEEN 1 AND 255),
    amount          bigint      NOT NULL CHECK (amount > 0 AND amount <= 1000000000000),
    currency        char(3)     NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    source          text        NOT NULL CHECK (length(source) BETWEEN 1 AND 255),
    status          text        NOT NULL DEFAULT 'PROCESSING'
                                CHECK (status IN ('PROCESSING', 'CAPTURED', 'FAILED', 'UNKNOWN')),
    refunded_amount bigint      NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0),
    psp_reference   text,
    decline_code    text,
    -- resolver bookkeeping for UNKNOWN / stuck PROCESSING payments
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    captured_at     timestamptz,
    CONSTRAINT refunds_within_amount CHECK (refunded_amount <= amount),
    CONSTRAINT captured_has_reference CHECK (status <> 'CAPTURED' OR psp_reference IS NOT NULL)
);
CREATE INDEX payments_merchant_order ON payments (merchant_id, order_id);
CREATE INDEX payments_unresolved ON payments (next_attempt_at) WHERE status IN ('PROCESSING', 'UNKNOWN');
CREATE INDEX payments_captured_at ON payments (captured_at) WHERE status = 'CAPTURED';

-- Every status change, written by trigger: the audit trail the resolver and tests read.
CREATE TABLE payment_transitions (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    payment_id  uuid        NOT NULL REFERENCES payments (id),
    from_status text        NOT NULL,
    to_status   text        NOT NULL,
    attempt     integer     NOT NULL,
    actor       text,
    at          timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX payment_transitions_payment ON payment_transitions (payment_id);

CREATE FUNCTION payments_guard_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.id <> OLD.id OR NEW.merchant_id <> OLD.merchant_id OR NEW.amount <> OLD.amount
       OR NEW.currency <> OLD.currency OR NEW.order_id <> OLD.order_id OR NEW.source <> OLD.source THEN
        RAISE EXCEPTION 'payment % identity and amount are immutable', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status AND NOT (
           (OLD.status = 'PROCESSING' AND NEW.status IN ('CAPTURED', 'FAILED', 'UNKNOWN'))
        OR (OLD.status = 'UNKNOWN'    AND NEW.status IN ('CAPTURED', 'FAILED'))) THEN
        RAISE EXCEPTION 'illegal payment transition % -> %', OLD.status, NEW.status USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.refunded_amount <> OLD.refunded_amount AND NEW.status <> 'CAPTURED' THEN
        RAISE EXCEPTION 'refunds only on CAPTURED payments' USING ERRCODE = 'check_violation';
    END IF;
    NEW.updated_at := now();
    RETURN NEW;
END $$;
CREATE TRIGGER payments_guard_transition BEFORE UPDATE ON payments
    FOR EACH ROW EXECUTE FUNCTION payments_guard_transition();

CREATE FUNCTION payments_log_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO payment_transitions (payment_id, from_status, to_status, attempt, actor)
    VALUES (NEW.id, OLD.status, NEW.status, NEW.attempts, current_setting('payments.actor', true));
    RETURN NULL;
END $$;
CREATE TRIGGER payments_log_transition AFTER UPDATE OF status ON payments
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION payments_log_transition();

-- Refunds. refunded_amount on the payment is the sum of PENDING and SUCCEEDED refunds (the reservation).
CREATE TABLE refunds (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    payment_id      uuid        NOT NULL REFERENCES payments (id),
    merchant_id     uuid        NOT NULL REFERENCES merchants (id),
    amount          bigint      NOT NULL CHECK (amount > 0 AND amount <= 1000000000000),
    currency        char(3)     NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    reason          text        CHECK (length(reason) <= 500),
    status          text        NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SUCCEEDED', 'FAILED')),
    psp_reference   text,
    failure_code    text,
    attempts        integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz
);
CREATE INDEX refunds_payment ON refunds (payment_id);
CREATE INDEX refunds_pending ON refunds (next_attempt_at) WHERE status = 'PENDING';

CREATE FUNCTION refunds_guard_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.id <> OLD.id OR NEW.payment_id <> OLD.payment_id OR NEW.amount <> OLD.amount THEN
        RAISE EXCEPTION 'refund % identity and amount are immutable', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status AND NOT (OLD.status = 'PENDING' AND NEW.status IN ('SUCCEEDED', 'FAILED')) THEN
        RAISE EXCEPTION 'illegal refund transition % -> %', OLD.status, NEW.status USING ERRCODE = 'check_violation';
    END IF;
    NEW.updated_at := now();
    RETURN NEW;
END $$;
CREATE TRIGGER refunds_guard_transition BEFORE UPDATE ON refunds
    FOR EACH ROW EXECUTE FUNCTION refunds_guard_transition();

-- Idempotency keys, scoped per merchant. The key is claimed by INSERT ... ON CONFLICT DO NOTHING.
CREATE TABLE idempotency_keys (
    merchant_id     uuid        NOT NULL REFERENCES merchants (id),
    key             text        NOT NULL CHECK (key ~ '^[\x20-\x7E]{1,255}$'),
    request_hash    bytea       NOT NULL,
    status          text        NOT NULL DEFAULT 'IN_PROGRESS' CHECK (status IN ('IN_PROGRESS', 'COMPLETED')),
    resource_type   text        CHECK (resource_type IN ('payment', 'refund')),
    resource_id     uuid,
    response_status integer     CHECK (response_status BETWEEN 100 AND 599),
    response_body   bytea,
    created_at      timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz,
    PRIMARY KEY (merchant_id, key),
    CONSTRAINT completed_has_response CHECK (status <> 'COMPLETED' OR (response_status IS NOT NULL AND response_body IS NOT NULL))
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Transactional outbox: rows written in the business transaction, published by outbox-relay.
CREATE TABLE outbox (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id   uuid        NOT NULL UNIQUE,
    event_type text        NOT NULL,
    topic      text        NOT NULL,
    key        text        NOT NULL,
    payload    jsonb       NOT NULL,
    headers    jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at    timestamptz
);
CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL;
CREATE INDEX outbox_sent_at ON outbox (sent_at) WHERE sent_at IS NOT NULL;

-- Double-entry ledger. Amounts are signed minor units (debit > 0, credit < 0); every transaction sums to
-- zero per currency at commit (deferred constraint trigger); entries are append-only.
CREATE TABLE ledger_transactions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind        text        NOT NULL CHECK (kind IN ('CAPTURE', 'REFUND', 'FEE', 'ADJUSTMENT')),
    -- what the transaction books (payment id, refund id, settlement line); one transaction per kind and reference
    reference   text        NOT NULL,
    merchant_id uuid        REFERENCES merchants (id),
    description text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (kind, reference)
);

CREATE TABLE ledger_entries (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id uuid        NOT NULL REFERENCES ledger_transactions (id),
    account        text        NOT NULL CHECK (length(account) BETWEEN 1 AND 100),
    amount         bigint      NOT NULL CHECK (amount <> 0),
    currency       char(3)     NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_account ON ledger_entries (account, currency);

CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    unbalanced text;
BEGIN
    SELECT currency INTO unbalanced FROM ledger_entries
     WHERE transaction_id = NEW.transaction_id GROUP BY currency HAVING sum(amount) <> 0 LIMIT 1;
    IF unbalanced IS NOT NULL THEN
        RAISE EXCEPTION 'ledger transaction % does not sum to zero in %', NEW.transaction_id, unbalanced
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced();

CREATE FUNCTION ledger_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger is append-only: % on % rejected', TG_OP, TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
    FOR EACH ROW EXECUTE FUNCTION ledger_reject_change();
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_reject_change();

-- PSP webhook events, stored once by the PSP's event id.
CREATE TABLE psp_webhook_events (
    event_id     text PRIMARY KEY CHECK (length(event_id) BETWEEN 1 AND 255),
    type         text        NOT NULL,
    payload      jsonb       NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    processed_at timestamptz,
    outcome      text
);

-- Reconciliation: the PSP's settlement lines per business date, runs, and breaks.
CREATE TABLE psp_settlements (
    business_date date        NOT NULL,
    line_no       integer     NOT NULL CHECK (line_no > 0),
    psp_reference text        NOT NULL,
    type          text        NOT NULL CHECK (type IN ('CHARGE', 'REFUND', 'CHARGEBACK', 'FEE')),
    reference     text,
    amount        bigint      NOT NULL,
    fee           bigint      NOT NULL DEFAULT 0,
    currency      char(3)     NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    settled_at    timestamptz NOT NULL,
    PRIMARY KEY (business_date, line_no)
);
CREATE INDEX psp_settlements_reference ON psp_settlements (reference);

CREATE TABLE recon_runs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    business_date date        NOT NULL,
    status        text        NOT NULL DEFAULT 'RUNNING' CHECK (status IN ('RUNNING', 'SUCCEEDED', 'FAILED')),
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    summary       jsonb
);
CREATE INDEX recon_runs_date ON recon_runs (business_date);

CREATE TABLE recon_breaks (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    business_date    date        NOT NULL,
    break_type       text        NOT NULL,
    reference        text        NOT NULL,
    psp_reference    text,
    internal_amount  bigint,
    psp_amount       bigint,
    currency         char(3),
    status           text        NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'REPORTED', 'RESOLVED')),
    first_run_id     bigint      NOT NULL REFERENCES recon_runs (id),
    last_run_id      bigint      NOT NULL REFERENCES recon_runs (id),
    times_seen       integer     NOT NULL DEFAULT 1 CHECK (times_seen > 0),
    created_at       timestamptz NOT NULL DEFAULT now(),
    reported_at      timestamptz,
    resolved_at      timestamptz,
    resolution       text,
    UNIQUE (business_date, break_type, reference)
);

-- Items that need a human: payments or refunds the automation gave up on, suspicious webhooks, breaks.
CREATE TABLE operations_queue (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subject_type text        NOT NULL CHECK (subject_type IN ('payment', 'refund', 'webhook', 'recon')),
    subject_id   text        NOT NULL,
    reason       text        NOT NULL,
    details      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    status       text        NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'RESOLVED')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    resolved_at  timestamptz
);
CREATE UNIQUE INDEX operations_queue_one_open ON operations_queue (subject_type, subject_id, reason) WHERE status = 'OPEN';

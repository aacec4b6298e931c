-- Operator console (payments-api, docs/console.md): operator sessions and the audit of operator actions.

-- A console login: the session cookie's SHA-256 (the cookie itself is never stored), the operator's name as given at
-- login, and the CSRF token that every form of the session carries (synchronizer token).
CREATE TABLE console_sessions (
    id_hash    bytea       PRIMARY KEY CHECK (length(id_hash) = 32),
    operator   text        NOT NULL CHECK (operator ~ '^[A-Za-z0-9._@-]{1,100}$'),
    csrf_token text        NOT NULL CHECK (length(csrf_token) BETWEEN 32 AND 100),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    ended_at   timestamptz,
    CHECK (expires_at > created_at)
);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

-- Who did what, when, with which note: every operator action (console and operator API). Append-only.
CREATE TABLE operator_audit (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    operator text        NOT NULL CHECK (length(operator) BETWEEN 1 AND 100),
    channel  text        NOT NULL CHECK (channel IN ('console', 'api')),
    action   text        NOT NULL CHECK (action IN ('login', 'login_refused', 'logout', 'resolve_operations_item',
                                                    'view_payment')),
    subject  text        CHECK (length(subject) <= 255),
    note     text        CHECK (length(note) <= 500),
    client   text        CHECK (length(client) <= 100)
);
CREATE INDEX operator_audit_subject ON operator_audit (subject) WHERE subject IS NOT NULL;

CREATE FUNCTION operator_audit_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'operator_audit is append-only: % rejected', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER operator_audit_append_only BEFORE UPDATE OR DELETE ON operator_audit
    FOR EACH ROW EXECUTE FUNCTION operator_audit_reject_change();
CREATE TRIGGER operator_audit_no_truncate BEFORE TRUNCATE ON operator_audit
    FOR EACH STATEMENT EXECUTE FUNCTION operator_audit_reject_change();

-- What the services' login may do (V79, docs/deployment.md "Database roles"): sessions are created, ended and purged;
-- the audit trail is insert-only.
-- Only where the role exists (V79: a single-login database has none).
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'payments_app') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON console_sessions TO payments_app;
        GRANT SELECT, INSERT                 ON operator_audit   TO payments_app;
    END IF;
END
$$;

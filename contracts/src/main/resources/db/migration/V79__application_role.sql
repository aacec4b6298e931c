-- Two database roles (issue 21, docs/deployment.md "Database roles"): the schema owner, who runs these migrations and
-- owns every table, and payments_app, the login of the running services, which gets only the DML each table needs.
-- payments_app owns nothing and is no superuser, so it cannot ALTER, DROP or TRUNCATE a table, nor DISABLE TRIGGER:
-- the append-only ledger and the state-machine triggers hold against it, not only against accidents.
--
-- The role is cluster-wide. Where the migration user may not create roles (CloudNativePG's database owner has no
-- CREATEROLE), the operator creates it first (a CNPG managed role, or CREATE ROLE by an administrator) and this
-- migration only grants. A role created here has no login and no password: passwords do not belong in migrations,
-- the operator sets both (ALTER ROLE payments_app LOGIN PASSWORD ...).
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'payments_app') THEN
        BEGIN
            CREATE ROLE payments_app NOLOGIN;
        EXCEPTION
            -- created at the same moment by a migration of another database of this cluster
            WHEN duplicate_object OR unique_violation THEN NULL;
            -- A user that may not create roles and finds none migrates a single-login database (a benchmark, a
            -- developer's own server) whose services log in as the owner: nothing to grant. A deployment creates the
            -- role first; its migration Job refuses to finish without it (payments.db.require-application-role).
            WHEN insufficient_privilege THEN
                RAISE WARNING 'role payments_app does not exist and % may not create it: nothing granted', current_user
                    USING HINT = 'Create it first (CNPG: spec.managed.roles; else CREATE ROLE payments_app LOGIN '
                                 'PASSWORD ...). See docs/deployment.md.';
                RETURN;
        END;
    END IF;
    -- A member of the owner (or a superuser) would have the owner's rights: refuse rather than grant to such a role.
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'payments_app' AND (rolsuper OR rolbypassrls))
       OR pg_has_role('payments_app', current_user, 'USAGE') THEN
        RAISE EXCEPTION 'payments_app must be neither a superuser nor a member of the schema owner %', current_user;
    END IF;
END
$$;

-- No DDL: nobody but the owner creates objects in the schema (PostgreSQL 15 already starts public so).
DO $$
BEGIN
    EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM PUBLIC', current_schema());
END
$$;

-- Everything below needs the role (see above).
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'payments_app') THEN
        RETURN;
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO payments_app', current_schema());

    -- The grant matrix: the union of what the services' SQL does (payments-api, outbox-relay, refunds-worker, reconciler)
    -- and what the triggers do on their behalf (they run with the caller's rights). SELECT ... FOR UPDATE needs UPDATE on
    -- one column. ApplicationRoleTest holds this list against the database, table by table: a table added later fails
    -- it until its own migration grants what it needs and the test's list says so.
    EXECUTE 'GRANT SELECT, INSERT ON merchants TO payments_app'; -- operator API creates merchants
    EXECUTE 'GRANT SELECT, INSERT ON merchant_api_keys TO payments_app';
    EXECUTE 'GRANT UPDATE (revoked_at) ON merchant_api_keys TO payments_app'; -- key rotation revokes, nothing else
    EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON payments TO payments_app'; -- DELETE: a charge never sent (api)
    EXECUTE 'GRANT SELECT, INSERT ON payment_transitions TO payments_app'; -- audit trail, insert-only (trigger)
    EXECUTE 'GRANT SELECT, INSERT, UPDATE ON refunds TO payments_app';
    EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO payments_app'; -- DELETE: retention purge
    EXECUTE 'GRANT SELECT, INSERT, DELETE ON outbox TO payments_app'; -- DELETE: relay purges published rows
    EXECUTE 'GRANT UPDATE (sent_at) ON outbox TO payments_app'; -- the relay marks rows published
    EXECUTE 'GRANT SELECT, UPDATE ON outbox_relay_state TO payments_app';
    EXECUTE 'GRANT SELECT, INSERT ON ledger_transactions TO payments_app'; -- append-only
    EXECUTE 'GRANT SELECT, INSERT ON ledger_entries TO payments_app'; -- append-only
    EXECUTE 'GRANT SELECT, INSERT, UPDATE ON psp_webhook_events TO payments_app';
    EXECUTE 'GRANT SELECT, INSERT, DELETE ON psp_settlements TO payments_app'; -- reconciler reloads a date (COPY)
    EXECUTE 'GRANT SELECT, INSERT, UPDATE ON recon_runs TO payments_app';
    EXECUTE 'GRANT SELECT, INSERT, UPDATE ON recon_breaks TO payments_app';
    EXECUTE 'GRANT SELECT, INSERT, UPDATE ON operations_queue TO payments_app';
    EXECUTE 'GRANT SELECT, INSERT, DELETE ON consumed_events TO payments_app'; -- DELETE: dedup retention purge
    EXECUTE 'GRANT UPDATE (consumed_at) ON consumed_events TO payments_app'; -- for the purge's FOR UPDATE only
    EXECUTE 'GRANT SELECT ON flyway_schema_history TO payments_app'; -- SchemaVersion check at start

    -- outbox_order_by_key() draws the row id with nextval() (V10), which checks the caller's rights on the sequence.
    EXECUTE 'GRANT USAGE ON SEQUENCE outbox_id_seq TO payments_app';

    -- Functions and sequences of the earlier migrations (V78's outbox enqueue and ledger booking functions among them)
    -- are the services' to call and draw from, whatever those migrations granted to PUBLIC. A trigger function cannot be
    -- called directly, so this gives nothing beyond the tables' grants.
    EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %I TO payments_app', current_schema());
    EXECUTE format('GRANT USAGE ON ALL SEQUENCES IN SCHEMA %I TO payments_app', current_schema());

    -- Objects the owner creates in later migrations: functions and sequences are usable by the services (the outbox
    -- enqueue and ledger booking functions, identity sequences); tables are readable, and writable only through the
    -- grants their migration adds (a decision ApplicationRoleTest insists on).
    EXECUTE 'ALTER DEFAULT PRIVILEGES GRANT EXECUTE ON FUNCTIONS TO payments_app';
    EXECUTE 'ALTER DEFAULT PRIVILEGES GRANT USAGE ON SEQUENCES TO payments_app';
    EXECUTE 'ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO payments_app';
END
$$;

-- One writer per table: every service enqueues events and books ledger transactions through these functions, so the
-- INSERTs into outbox, ledger_transactions and ledger_entries exist once (docs/operations.md, "One writer per table").
-- The guards of V1, V10, V60 and V70 stay on the tables and fire inside the functions as before: the per-key
-- ordering and the wake-up of the relay (outbox triggers), one transaction per (kind, reference), the balance of each
-- statement's entries and the append-only rule (ledger triggers).
--
-- Each writer has a set-based form (arrays, one element per row) for the batched statements of the capture path, and
-- a one-row form that calls it. The set-based forms run one INSERT per table for the whole set: a batch costs one
-- function call, one outbox notification and one balance check, like the INSERTs it replaces. They are plpgsql so
-- that their statements are planned once per session. SECURITY INVOKER (the default): a caller needs the same table
-- privileges as before.

-- Enqueues events for outbox-relay. Arrays of equal length; a NULL headers element is '{}'.
CREATE FUNCTION enqueue_events(p_event_ids uuid[], p_event_types text[], p_topics text[], p_keys text[],
                               p_payloads jsonb[], p_headers jsonb[]) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    enqueued integer;
BEGIN
    INSERT INTO outbox (event_id, event_type, topic, key, payload, headers)
    SELECT event_id, event_type, topic, key, payload, coalesce(headers, '{}')
      FROM unnest(p_event_ids, p_event_types, p_topics, p_keys, p_payloads, p_headers)
           AS e (event_id, event_type, topic, key, payload, headers);
    GET DIAGNOSTICS enqueued = ROW_COUNT;
    RETURN enqueued;
END $$;

CREATE FUNCTION enqueue_event(p_event_id uuid, p_event_type text, p_topic text, p_key text, p_payload jsonb,
                              p_headers jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM enqueue_events(ARRAY[p_event_id], ARRAY[p_event_type], ARRAY[p_topic], ARRAY[p_key], ARRAY[p_payload],
                           ARRAY[p_headers]);
END $$;

-- Books one ledger transaction of kind p_kind per reference: p_debit_account +amount and p_credit_account -amount in
-- its currency (docs/operations.md, "Ledger accounts"). All entries go in one INSERT, so the V70 trigger checks them
-- together. A reference booked before (UNIQUE (kind, reference)) fails the call with unique_violation, unless
-- p_skip_booked: then that reference is left as it is (a re-run of the reconciler). Returns how many it booked.
CREATE FUNCTION book_ledger_transactions(p_kind text, p_debit_account text, p_credit_account text,
                                         p_references text[], p_merchant_ids uuid[], p_descriptions text[],
                                         p_amounts bigint[], p_currencies text[], p_skip_booked boolean)
    RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    booked integer;
BEGIN
    -- A reference twice in one call would book its entries twice under one transaction. Without p_skip_booked the
    -- second one fails the call below anyway (not booked), so only that case needs the extra query.
    IF p_skip_booked AND cardinality(p_references) <> (SELECT count(DISTINCT r) FROM unnest(p_references) AS r) THEN
        RAISE EXCEPTION 'ledger references of one booking must be distinct' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    WITH input AS (
        SELECT * FROM unnest(p_references, p_merchant_ids, p_descriptions, p_amounts, p_currencies)
            AS t (reference, merchant_id, description, amount, currency)),
    tx AS (
        INSERT INTO ledger_transactions (kind, reference, merchant_id, description)
        SELECT p_kind, reference, merchant_id, description FROM input
        ON CONFLICT (kind, reference) DO NOTHING
        RETURNING id, reference),
    entries AS (
        INSERT INTO ledger_entries (transaction_id, account, amount, currency)
        SELECT tx.id, e.account, e.sign * input.amount, input.currency
          FROM tx JOIN input USING (reference),
               (VALUES (p_debit_account, 1), (p_credit_account, -1)) AS e (account, sign))
    SELECT count(*) INTO booked FROM tx;
    IF NOT p_skip_booked AND booked < coalesce(cardinality(p_references), 0) THEN
        RAISE EXCEPTION 'duplicate key value violates unique constraint "ledger_transactions_kind_reference_key"'
            USING ERRCODE = 'unique_violation', CONSTRAINT = 'ledger_transactions_kind_reference_key',
                  TABLE = 'ledger_transactions', DETAIL = format('A %s transaction of one of %s exists.', p_kind,
                                                                 p_references);
    END IF;
    RETURN booked;
END $$;

CREATE FUNCTION book_ledger_transaction(p_kind text, p_debit_account text, p_credit_account text, p_reference text,
                                        p_merchant_id uuid, p_description text, p_amount bigint, p_currency text,
                                        p_skip_booked boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RETURN book_ledger_transactions(p_kind, p_debit_account, p_credit_account, ARRAY[p_reference],
                                    ARRAY[p_merchant_id], ARRAY[p_description], ARRAY[p_amount], ARRAY[p_currency],
                                    p_skip_booked) = 1;
END $$;

-- A text as uuid, or NULL when it is not one in canonical lower-case form (settlement references are free text).
CREATE FUNCTION try_uuid(p_text text) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_text ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN p_text::uuid END
$$;

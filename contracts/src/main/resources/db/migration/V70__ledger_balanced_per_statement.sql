-- Cheaper enforcement of two V1/V60 rules on the capture path (docs/benchmarks.md, "Capture path").

-- 1. Ledger balance per statement instead of a deferred check per entry.
-- V1 queued a deferred constraint trigger for every entry, and each ran an aggregate over its transaction's entries
-- at commit: two queries per capture. Now one statement-level trigger checks the entries the statement inserted,
-- grouped by ledger transaction and currency. Every writer posts a ledger transaction's entries in one INSERT (the
-- capture, the refund, the reconciler's fees and captures), so the rule "each INSERT's entries sum to zero per
-- transaction and currency" holds for them, and since entries are append-only it implies the V1 invariant (the
-- entries of a transaction are a sum of balanced statements) at every moment, not only at commit.
DROP TRIGGER ledger_entries_balanced ON ledger_entries;
DROP FUNCTION ledger_check_balanced();

CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    unbalanced record;
BEGIN
    SELECT transaction_id, currency INTO unbalanced FROM new_entries
     GROUP BY transaction_id, currency HAVING sum(amount) <> 0 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % does not sum to zero in %', unbalanced.transaction_id, unbalanced.currency
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_check_balanced();

-- 2. No NOTIFY while no publisher sleeps. V60 started the flag at true, so until a relay had slept once (and while
-- none runs) every outbox insert notified, for no listener. The flag now means "a publisher said it sleeps": the
-- relay sets it before it waits and clears it after (docs/outbox-relay.md, "Wake-up"); it never relies on the
-- starting value. A relay asleep while this runs is woken by its poll interval instead, once.
ALTER TABLE outbox_relay_state ALTER COLUMN sleeping SET DEFAULT false;
UPDATE outbox_relay_state SET sleeping = false;

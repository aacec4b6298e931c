-- outbox-relay: wake the relay only while it sleeps (docs/outbox-relay.md, "Wake-up").
--
-- PostgreSQL serializes the commit of every transaction that issued a NOTIFY on one database-wide lock (taken in
-- PreCommit_Notify and held until the commit is done). Notifying on every outbox insert therefore puts all
-- business commits in a single file; bench/capture-sql.sh measured +40 % captures/s without the notification, and
-- with synchronous_commit on every commit's WAL flush would queue behind the previous one. A busy relay needs no
-- wake-up: it reads again right after each round. So the publisher records whether it sleeps, and writers notify
-- only then.
--
-- No lost wake-up: a writer takes the shared fence lock before it reads the flag and holds it until it commits.
-- The relay going to sleep (1) sets sleeping = true and commits, (2) takes the fence exclusively and releases it,
-- which waits for every writer that may have read the flag before (1), (3) looks for unsent rows once more, and
-- only then waits for a NOTIFY. A writer that read the flag before (1) has committed by (3), so (3) sees its row;
-- one that reads it after (1) notifies. (plpgsql statements in a volatile function take a fresh snapshot in READ
-- COMMITTED, so the flag is read after the lock is held.)
CREATE TABLE outbox_relay_state (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    sleeping  boolean NOT NULL DEFAULT true
);
INSERT INTO outbox_relay_state DEFAULT VALUES;

-- Fence key (hashtext('outbox-relay'), 2); (…, 1) is the publisher's session lock.
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtext('outbox-relay'), 2);
    IF (SELECT sleeping FROM outbox_relay_state) THEN
        PERFORM pg_notify('outbox', '');
    END IF;
    RETURN NULL;
END
$$;

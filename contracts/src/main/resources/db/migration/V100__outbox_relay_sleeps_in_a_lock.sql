-- outbox-relay: the publisher says it sleeps by holding the fence lock, not by writing outbox_relay_state (issue 38
-- item 2; docs/outbox-relay.md, "Wake-up"). V60's flag cost two row updates and two commits per wake-up (1.79 row
-- updates per capture in CostBudgetTest), with their WAL.
--
-- The fence key (hashtext('outbox-relay'), 2) is now also the flag. Going to sleep, the publisher takes it
-- exclusively and keeps it (a session lock) while it waits; waking, it releases it. A writer tries to take it shared:
-- - it fails while the publisher holds it or waits for it: the writer notifies (at commit);
-- - it succeeds while the publisher is awake, and holds it to its commit, so a publisher going to sleep waits for
--   that commit before it looks for unsent rows once more, and that look finds the writer's row.
-- So no wake-up is lost, and no row is written for it. A publisher that dies asleep frees the lock with its session.
--
-- Rolling upgrade: the previous release's relay (1.8.0) still sets outbox_relay_state.sleeping, then takes the fence
-- exclusively and releases it. A writer whose try succeeds reads the flag after the lock (a fresh snapshot: a separate
-- plpgsql statement in READ COMMITTED) and notifies when it is true, as in V60: that relay is woken as before. The
-- new relay never sets the flag; it clears one left true by an old publisher when it becomes the publisher. The flag
-- and this read can go once no 1.8.0 relay runs.
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_try_advisory_xact_lock_shared(hashtext('outbox-relay'), 2) THEN
        PERFORM pg_notify('outbox', '');
    ELSIF (SELECT sleeping FROM outbox_relay_state) THEN
        PERFORM pg_notify('outbox', '');
    END IF;
    RETURN NULL;
END
$$;

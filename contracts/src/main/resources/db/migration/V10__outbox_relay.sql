-- outbox-relay (issue 6): per-payment commit order and a wake-up signal for the relay. See docs/outbox-relay.md.

-- 1. Per-key commit order = id order.
-- The relay publishes unsent rows in id order. For that to be each payment's commit order, two transactions
-- that write rows for the same key must not interleave: the trigger takes a transaction-scoped advisory lock
-- on the key (held until commit or rollback) and only then draws the row's id. A second writer of the same
-- key waits for the first to finish, so its id is larger and its commit later. Writers of one payment are
-- usually already serialized by the lock on the payment row; this makes the order a property of the table
-- instead of a habit of every writer. (The identity default is evaluated before BEFORE triggers run, which is
-- why the id is drawn again here; the first value is simply skipped.)
-- A transaction that writes rows for several keys takes several locks: keep such transactions to one key, or
-- write keys in a stable order, or PostgreSQL may abort one of two opposite-order writers as a deadlock.
CREATE FUNCTION outbox_order_by_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(NEW.key, 0));
    NEW.id := nextval(pg_get_serial_sequence('outbox', 'id'));
    RETURN NEW;
END
$$;

CREATE TRIGGER outbox_order_by_key
    BEFORE INSERT ON outbox
    FOR EACH ROW EXECUTE FUNCTION outbox_order_by_key();

-- 2. Wake the relay at commit (LISTEN outbox). One notification per statement; PostgreSQL also folds
-- identical notifications of one transaction into one. Polling stays as the fallback.
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('outbox', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER outbox_notify
    AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();

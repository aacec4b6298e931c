-- Authorize now, capture later (issue 42; docs/operations.md "Payment states"): a payment with capture method MANUAL is
-- authorized first and later captured (all or part of its amount), canceled (voided) or expired. The state machine,
-- the amounts and the refunds' bound live here, as for automatic captures.
--
-- A MANUAL payment never uses PROCESSING or UNKNOWN: its authorization is AUTHORIZING until the PSP's answer is
-- recorded (in flight, or unknown after a timeout: last_error says which), and each later PSP call has its own state
-- while its outcome is not recorded: CAPTURING, CANCELING (the merchant's void), EXPIRING (the expiry's void). The
-- resolver works them by next_attempt_at and attempts as it works PROCESSING and UNKNOWN. Separate states keep the
-- previous release (1.8.0, which claims PROCESSING and UNKNOWN and re-sends an automatic charge when the PSP never got
-- one) away from manual payments during a roll: it would capture an authorization in full.
--
--   AUTOMATIC: PROCESSING -> CAPTURED | FAILED | UNKNOWN;  UNKNOWN -> CAPTURED | FAILED          (as before)
--   MANUAL:    AUTHORIZING -> AUTHORIZED | FAILED
--              AUTHORIZED  -> CAPTURING | CANCELING | EXPIRING       (a guarded update from AUTHORIZED: one wins)
--              CAPTURING   -> CAPTURED                               (the PSP captured captured_amount)
--                           | AUTHORIZED                             (certainly not captured: never sent, or refused
--                                                                       with the authorization intact)
--                           | EXPIRED                                (refused: the PSP's authorization had lapsed)
--              CANCELING   -> CANCELED | AUTHORIZED (certainly not voided)
--              EXPIRING    -> EXPIRED  | AUTHORIZED (certainly not voided)
-- A capture, a cancel and the expiry each start with a guarded UPDATE ... WHERE status = 'AUTHORIZED': of racing ones
-- exactly one finds the row AUTHORIZED (the others wait for its row lock, then find it moved: no row, or refused by
-- the guard below), and its row count tells the caller that it won. Only the winner calls the PSP.
--
-- Amounts: amount is what the payment asked for and, for MANUAL, what was authorized (it stays immutable).
-- captured_amount is set by the step AUTHORIZED -> CAPTURING (what the capture asks for: 1..amount) and kept by
-- CAPTURED; it is NULL on every AUTOMATIC payment, whose capture is its whole amount. So the captured amount of a
-- payment is coalesce(captured_amount, amount): refunds reserve against it (refund-reserve.sql) and its CHECK
-- bounds refunded_amount by it. No backfill: every existing row is AUTOMATIC with captured_amount NULL, which is
-- already right, and the previous release, which writes neither column, keeps writing valid AUTOMATIC rows.
--
-- Ledger: an authorization, a cancel and an expiry book nothing; a capture books its captured amount as the CAPTURE
-- transaction of the payment (book_ledger_transactions, as an automatic capture). Held at commit for MANUAL payments by
-- the constraint trigger payments_manual_ledger; the automatic path pays nothing for it (its WHEN is false there).
--
-- Online: new columns are nullable or have a constant default (no rewrite); constraints are added NOT VALID (every
-- existing row satisfies them: AUTOMATIC, captured_amount NULL, an old status), so no scan under the ALTER's lock; the
-- functions are replaced in place. The partial indexes the resolver and the expiry will need for the new states
-- are built CONCURRENTLY in their own migrations with that code (CONCURRENTLY cannot share this transaction).
SET LOCAL lock_timeout = '2s';

ALTER TABLE payments
    ADD COLUMN capture_method  text NOT NULL DEFAULT 'AUTOMATIC',
    ADD COLUMN captured_amount bigint,
    -- when the authorization succeeded (AUTHORIZING -> AUTHORIZED, set by payments_guard_transition): the expiry
    -- counts from it
    ADD COLUMN authorized_at   timestamptz;

ALTER TABLE payments ADD CONSTRAINT payments_capture_method_check
    CHECK (capture_method IN ('AUTOMATIC', 'MANUAL')) NOT VALID;

-- V1's list of states, replaced under the same name by the one with the manual states.
ALTER TABLE payments DROP CONSTRAINT payments_status_check;
ALTER TABLE payments ADD CONSTRAINT payments_status_check CHECK (status IN (
    'PROCESSING', 'CAPTURED', 'FAILED', 'UNKNOWN',
    'AUTHORIZING', 'AUTHORIZED', 'CAPTURING', 'CANCELING', 'CANCELED', 'EXPIRING', 'EXPIRED')) NOT VALID;

-- Which states belong to which capture method (also on INSERT, which the transition trigger does not see).
ALTER TABLE payments ADD CONSTRAINT payments_status_of_capture_method CHECK (
    CASE capture_method
        WHEN 'AUTOMATIC' THEN status IN ('PROCESSING', 'UNKNOWN', 'CAPTURED', 'FAILED')
        ELSE status IN ('AUTHORIZING', 'AUTHORIZED', 'CAPTURING', 'CAPTURED', 'CANCELING', 'CANCELED', 'EXPIRING',
                        'EXPIRED', 'FAILED')
    END) NOT VALID;

-- A capture is never more than the authorization (nor zero), whatever the statement or the concurrency.
ALTER TABLE payments ADD CONSTRAINT captured_within_authorized
    CHECK (captured_amount > 0 AND captured_amount <= amount) NOT VALID;

-- captured_amount exactly while a MANUAL payment is being or has been captured.
ALTER TABLE payments ADD CONSTRAINT captured_amount_only_when_captured
    CHECK ((captured_amount IS NOT NULL) = (capture_method = 'MANUAL' AND status IN ('CAPTURING', 'CAPTURED')))
    NOT VALID;

-- An authorization exists at the PSP under psp_reference from AUTHORIZED on, and its time is known.
ALTER TABLE payments ADD CONSTRAINT authorized_has_reference CHECK (
    status NOT IN ('AUTHORIZED', 'CAPTURING', 'CANCELING', 'CANCELED', 'EXPIRING', 'EXPIRED')
    OR (psp_reference IS NOT NULL AND authorized_at IS NOT NULL)) NOT VALID;

-- Never refund more than was captured. V1's refunds_within_amount stays (the previous release's bound, implied by this
-- one); the name sorts after it, so an automatic payment's over-refund still reports refunds_within_amount.
ALTER TABLE payments ADD CONSTRAINT refunds_within_captured_amount
    CHECK (refunded_amount <= coalesce(captured_amount, amount)) NOT VALID;

-- V1's guard (V1, unchanged for automatic payments) with the manual transitions above; the capture method joins the
-- immutable identity; captured_amount changes only when a capture starts or is undone; authorized_at is set once, by
-- the authorization.
CREATE OR REPLACE FUNCTION payments_guard_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.id <> OLD.id OR NEW.merchant_id <> OLD.merchant_id OR NEW.amount <> OLD.amount
       OR NEW.currency <> OLD.currency OR NEW.order_id <> OLD.order_id OR NEW.source <> OLD.source
       OR NEW.capture_method <> OLD.capture_method THEN
        RAISE EXCEPTION 'payment % identity and amount are immutable', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status AND NOT (
           (OLD.status = 'PROCESSING'  AND NEW.status IN ('CAPTURED', 'FAILED', 'UNKNOWN'))
        OR (OLD.status = 'UNKNOWN'     AND NEW.status IN ('CAPTURED', 'FAILED'))
        OR (OLD.status = 'AUTHORIZING' AND NEW.status IN ('AUTHORIZED', 'FAILED'))
        OR (OLD.status = 'AUTHORIZED'  AND NEW.status IN ('CAPTURING', 'CANCELING', 'EXPIRING'))
        OR (OLD.status = 'CAPTURING'   AND NEW.status IN ('CAPTURED', 'AUTHORIZED', 'EXPIRED'))
        OR (OLD.status = 'CANCELING'   AND NEW.status IN ('CANCELED', 'AUTHORIZED'))
        OR (OLD.status = 'EXPIRING'    AND NEW.status IN ('EXPIRED', 'AUTHORIZED'))) THEN
        RAISE EXCEPTION 'illegal payment transition % -> %', OLD.status, NEW.status USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.captured_amount IS DISTINCT FROM OLD.captured_amount
       AND NOT (OLD.status = 'AUTHORIZED' AND NEW.status = 'CAPTURING')
       AND NOT (OLD.status = 'CAPTURING' AND NEW.status IN ('AUTHORIZED', 'EXPIRED')) THEN
        RAISE EXCEPTION 'payment % captured amount is set only when its capture starts', OLD.id
            USING ERRCODE = 'check_violation';
    END IF;
    IF OLD.status = 'AUTHORIZING' AND NEW.status = 'AUTHORIZED' THEN
        NEW.authorized_at := now();
    ELSIF NEW.authorized_at IS DISTINCT FROM OLD.authorized_at THEN
        RAISE EXCEPTION 'payment % authorized_at is set only by its authorization', OLD.id
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.refunded_amount <> OLD.refunded_amount AND NEW.status <> 'CAPTURED' THEN
        RAISE EXCEPTION 'refunds only on CAPTURED payments' USING ERRCODE = 'check_violation';
    END IF;
    NEW.updated_at := now();
    RETURN NEW;
END $$;

-- At commit, a MANUAL payment that came to rest has exactly the ledger its state says: CAPTURED, a CAPTURE transaction
-- of its captured amount; any other state, none. Deferred, so that the statement or transaction that moves the
-- payment may book in any order; it reads the payment as it is at commit (a transaction may move it more than one
-- step). Only MANUAL payments queue it.
CREATE FUNCTION payments_manual_ledger_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    p      payments%ROWTYPE;
    booked bigint;
BEGIN
    SELECT * INTO p FROM payments WHERE id = NEW.id;
    SELECT sum(e.amount) FILTER (WHERE e.amount > 0) INTO booked
      FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
     WHERE t.kind = 'CAPTURE' AND t.reference = p.id::text;
    IF p.status = 'CAPTURED' AND booked IS DISTINCT FROM p.captured_amount THEN
        RAISE EXCEPTION 'payment % captured % but its CAPTURE ledger transaction books %', p.id,
            p.captured_amount, coalesce(booked::text, 'nothing') USING ERRCODE = 'check_violation';
    ELSIF p.status <> 'CAPTURED' AND booked IS NOT NULL THEN
        RAISE EXCEPTION 'payment % is % but a CAPTURE ledger transaction books % for it', p.id, p.status, booked
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER payments_manual_ledger AFTER UPDATE OF status ON payments
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.capture_method = 'MANUAL' AND OLD.status IS DISTINCT FROM NEW.status
          AND NEW.status IN ('AUTHORIZED', 'CAPTURED', 'CANCELED', 'EXPIRED', 'FAILED'))
    EXECUTE FUNCTION payments_manual_ledger_check();

-- An authorization whose key was completed with a 202 (AUTHORIZING, outcome unknown) becomes final when the outcome is
-- recorded: its key's retention starts then (V73's rule, as UNKNOWN -> CAPTURED/FAILED).
CREATE TRIGGER payments_authorization_final_key AFTER UPDATE OF status ON payments
    FOR EACH ROW WHEN (OLD.status = 'AUTHORIZING' AND NEW.status IN ('AUTHORIZED', 'FAILED'))
    EXECUTE FUNCTION idempotency_keys_resource_final('payment');

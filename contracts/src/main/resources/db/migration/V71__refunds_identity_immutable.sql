-- A refund's merchant and currency are as immutable as its payment and amount (V1 froze only id, payment_id and
-- amount): the reservation, the ledger entries and the PSP refund were all made for them.
CREATE OR REPLACE FUNCTION refunds_guard_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.id <> OLD.id OR NEW.payment_id <> OLD.payment_id OR NEW.amount <> OLD.amount
       OR NEW.merchant_id <> OLD.merchant_id OR NEW.currency <> OLD.currency THEN
        RAISE EXCEPTION 'refund % identity and amount are immutable', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status AND NOT (OLD.status = 'PENDING' AND NEW.status IN ('SUCCEEDED', 'FAILED')) THEN
        RAISE EXCEPTION 'illegal refund transition % -> %', OLD.status, NEW.status USING ERRCODE = 'check_violation';
    END IF;
    NEW.updated_at := now();
    RETURN NEW;
END $$;

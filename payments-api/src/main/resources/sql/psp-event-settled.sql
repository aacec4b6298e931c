-- A PSP event about a payment that is already in the final state the event names ($5), with the money the event says
-- when it says any ($6, $7; the amount the PSP moved: for a manual payment its captured amount): stored once by its id
-- as processed with the outcome no_change, in this one statement (PspEventRepository.storeIfPaymentSettled; a
-- refund's event: psp-refund-event.sql). No row lock and no update: a final state never changes
-- (the tables' transition guards), so nothing can make the answer wrong before the commit.
WITH subject AS (
    SELECT 1 FROM payments
     WHERE id = $4 AND status = $5
       AND ($6::int8 IS NULL OR coalesce(captured_amount, amount) = $6) AND ($7::text IS NULL OR currency = $7)
), stored AS (
    INSERT INTO psp_webhook_events (event_id, type, payload, processed_at, outcome)
    SELECT $1, $2, $3::text::jsonb, now(), 'no_change' FROM subject
    ON CONFLICT (event_id) DO NOTHING
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM subject) AS settled, EXISTS (SELECT 1 FROM stored) AS stored

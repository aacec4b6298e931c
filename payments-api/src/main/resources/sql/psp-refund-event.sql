-- A PSP event about a refund's final outcome ($5: SUCCEEDED or FAILED, with the money it names when it names any: $6,
-- $7), stored and applied in this one statement when the refund agrees with it (RefundEvents.storeInOneStatement):
--  * the refund is already in that final state: the event is stored as processed, outcome no_change, with no row lock
--    and no update (a final state never changes, the tables' transition guards);
--  * the refund is PENDING: its row is locked, the event stored as processed, outcome applied, and the refund settled
--    by settle_refund ($8 to $11: PSP reference, failure code, actor, trace headers) under that lock, so nothing
--    settles it in between; the event's row is written once, with its outcome (no update of it afterwards).
-- Anything else stores nothing and answers agrees = false, and the event goes the whole way (PspEventService): no such
-- refund, other money, the other final state, or a refund that left PENDING while this statement waited for its lock
-- (then the lock's re-check finds it no longer PENDING and the snapshot did not see it final).
-- The lock comes before the event's insert; the whole way inserts the event first, then locks the refund. They never
-- wait on each other: the whole way is taken only for a refund that is no longer PENDING (or never agrees), and a
-- statement here locks only a PENDING one.
WITH final AS (
    SELECT 1 FROM refunds
     WHERE id = $4 AND status = $5
       AND ($6::int8 IS NULL OR amount = $6) AND ($7::text IS NULL OR currency = $7)
), pending AS (
    SELECT 1 FROM refunds
     WHERE id = $4 AND status = 'PENDING'
       AND ($6::int8 IS NULL OR amount = $6) AND ($7::text IS NULL OR currency = $7)
       FOR UPDATE
), stored AS (
    INSERT INTO psp_webhook_events (event_id, type, payload, processed_at, outcome)
    SELECT $1, $2, $3::text::jsonb, now(),
           CASE WHEN EXISTS (SELECT 1 FROM pending) THEN 'applied' ELSE 'no_change' END
     WHERE EXISTS (SELECT 1 FROM final) OR EXISTS (SELECT 1 FROM pending)
    ON CONFLICT (event_id) DO NOTHING
    RETURNING outcome
)
SELECT EXISTS (SELECT 1 FROM final) OR EXISTS (SELECT 1 FROM pending) AS agrees,
       (SELECT outcome FROM stored) AS outcome,
       (SELECT settle_refund($4, $5, $8, $9, $10, $11::text::jsonb) FROM stored WHERE outcome = 'applied') AS settled

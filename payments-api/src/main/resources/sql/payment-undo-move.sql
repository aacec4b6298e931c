-- Undoes a capture's or void's move (PaymentRepository.undoMove): the payment back to $3 when it is still $2 and
-- unclaimed since ($4 attempts), its in-progress key released, a completed one made final, and its event if any; the
-- PSP call that refused it ($12..$16), if any, goes to psp_calls whether or not the move is undone (it was made).
WITH undone AS (
    UPDATE payments
       SET status = $3, captured_amount = NULL, next_attempt_at = NULL, last_error = $5
     WHERE id = $1 AND status = $2 AND ($4::int4 IS NULL OR attempts = $4)
       AND set_config('payments.actor', $6, true) IS NOT NULL
    RETURNING id),
released AS (
    DELETE FROM idempotency_keys k USING undone
     WHERE k.resource_type = 'payment' AND k.resource_id = undone.id
       AND k.status = 'IN_PROGRESS'),
finalized AS (
    UPDATE idempotency_keys k SET final_at = now() FROM undone
     WHERE k.resource_type = 'payment' AND k.resource_id = undone.id
       AND k.status = 'COMPLETED' AND k.final_at IS NULL),
event AS (
    SELECT enqueue_events(ARRAY[$7::uuid], ARRAY[$8::text], ARRAY[$9::text], ARRAY[id::text],
                          ARRAY[$10::jsonb], ARRAY[$11::jsonb])
      FROM undone WHERE $7::uuid IS NOT NULL),
psp_call AS (
    INSERT INTO psp_calls (payment_id, kind, attempt, started_at, duration_ms, outcome)
    SELECT $1, $12::text, $13::int4, $14::timestamptz, $15::int4, $16::text WHERE $12::text IS NOT NULL)
SELECT count(*) FROM undone LEFT JOIN event ON true

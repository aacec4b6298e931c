-- DeliveryRepository#recordSucceeded: successful attempts, one array element each ($1 delivery ids, $2 the leases'
-- ends, $3 attempt starts, $4 latencies in ms, $5 response codes). Each delivery becomes SUCCEEDED with its attempt row
-- and its endpoint's failing_since is cleared, only while its lease is still this sender's (next_attempt_at =
-- leased_until); returns the ids written.
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[], $4::int[], $5::int[])
        AS i (id, leased_until, started_at, latency_ms, response_code)),
done AS (
    UPDATE webhook_deliveries d
       SET status = 'SUCCEEDED', attempts = d.attempts + 1, next_attempt_at = NULL,
           updated_at = now()
      FROM input i
     WHERE d.id = i.id AND d.status = 'PENDING' AND d.next_attempt_at = i.leased_until
    RETURNING d.id, d.endpoint_id, d.attempts, i.started_at, i.latency_ms, i.response_code),
attempts AS (
    INSERT INTO webhook_delivery_attempts
        (delivery_id, attempt, started_at, latency_ms, response_code, outcome)
    SELECT id, attempts, started_at, latency_ms, response_code, 'SUCCEEDED' FROM done),
healthy AS (
    UPDATE webhook_endpoints SET failing_since = NULL, updated_at = now()
     WHERE id IN (SELECT endpoint_id FROM done) AND failing_since IS NOT NULL)
SELECT id FROM done

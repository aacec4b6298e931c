-- DeliveryRepository#lease: leases at most $4 due deliveries, at most $3 in flight per endpoint counting this
-- instance's own ($1 endpoints, $2 their counts), every endpoint's oldest due delivery before any endpoint's second;
-- moves each forward by $5 seconds (the lease) and returns what its attempt needs. The event is read only when it is
-- the endpoint's merchant's (a delivery row naming another merchant's event id leases no event: it is closed unsent).
-- The endpoint's unexpired secrets come newest first, as stored: sealed (id, key_id, ciphertext) or, for a row not yet
-- sealed by payments-api's WebhookSecretSealingJob, in plaintext.
WITH in_flight AS (SELECT * FROM unnest($1::uuid[], $2::int[]) AS f (endpoint_id, n)),
candidates AS (
    SELECT x.id, x.event_id, e.id AS endpoint_id, e.rnd, coalesce(f.n, 0) AS n,
           row_number() OVER (PARTITION BY e.id ORDER BY x.next_attempt_at) AS rn
      FROM (SELECT id, random() AS rnd FROM webhook_endpoints) e
      LEFT JOIN in_flight f ON f.endpoint_id = e.id
     CROSS JOIN LATERAL (
           SELECT d.id, d.event_id, d.next_attempt_at FROM webhook_deliveries d
            WHERE d.endpoint_id = e.id AND d.status = 'PENDING' AND d.next_attempt_at <= now()
            ORDER BY d.next_attempt_at
            LIMIT $3
            FOR UPDATE SKIP LOCKED) x),
picked AS (SELECT id, event_id, endpoint_id FROM candidates WHERE rn <= $3 - n ORDER BY rn, rnd LIMIT $4)
UPDATE webhook_deliveries d
   SET next_attempt_at = now() + make_interval(secs => $5), updated_at = now()
  FROM picked p
  JOIN webhook_endpoints e ON e.id = p.endpoint_id
  LEFT JOIN merchant_events m ON m.id = p.event_id AND m.merchant_id = e.merchant_id
  LEFT JOIN LATERAL (
        SELECT array_agg(s.id ORDER BY s.created_at DESC, s.id) AS ids,
               array_agg(s.key_id ORDER BY s.created_at DESC, s.id) AS key_ids,
               array_agg(s.ciphertext ORDER BY s.created_at DESC, s.id) AS ciphertexts,
               array_agg(s.secret ORDER BY s.created_at DESC, s.id) AS plaintexts
          FROM webhook_endpoint_secrets s
         WHERE s.endpoint_id = e.id AND (s.expires_at IS NULL OR s.expires_at > now())) s ON true
 WHERE d.id = p.id AND d.endpoint_id = e.id
RETURNING d.id, d.endpoint_id, d.event_id, d.attempts, d.created_at, d.next_attempt_at,
          e.url, e.status,
          s.ids AS secret_ids, s.key_ids AS secret_key_ids, s.ciphertexts AS secret_ciphertexts,
          s.plaintexts AS secret_plaintexts,
          m.type AS event_type, m.created_at AS event_created_at, m.version AS event_version,
          m.payment::text AS event_payment, m.payload::text AS payload

-- Everything recorded about payment $1 and its refunds, as timeline entries (at, source, title, detail) for the
-- console's payment story (ConsoleRepository.story, docs/console.md); the caller sorts.
WITH p AS (SELECT * FROM payments WHERE id = $1),
     refs AS (SELECT id::text AS ref, 'CAPTURE' AS kind FROM p
              UNION ALL SELECT id::text, 'REFUND' FROM refunds WHERE payment_id = $1),
     ledger AS (
         SELECT e.created_at, t.kind, t.reference, e.account, e.amount, e.currency,
                sum(e.amount) OVER (PARTITION BY e.account, e.currency ORDER BY e.id) AS balance
           FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE (t.kind, t.reference) IN (SELECT kind, ref FROM refs))
SELECT created_at AS at, 'api' AS source, 'payment created' AS title,
       format('order %s, %s %s, source %s', order_id, amount, currency, source)
           || CASE WHEN capture_method = 'MANUAL' THEN ', manual capture: authorize now, capture later' ELSE '' END
           AS detail FROM p
UNION ALL
-- A manual payment's transitions also say what happened to its authorization (V98, docs/operations.md). Only one
-- capture of an authorization succeeds, so the payment's captured_amount is the one of its CAPTURING -> CAPTURED.
SELECT t.at, 'transition',
       format('%s → %s', t.from_status, t.to_status) || coalesce(': ' || CASE t.from_status || '>' || t.to_status
           WHEN 'AUTHORIZING>AUTHORIZED' THEN format('authorized %s %s', p.amount, p.currency)
           WHEN 'AUTHORIZING>FAILED' THEN 'authorization failed'
           WHEN 'AUTHORIZED>CAPTURING' THEN 'capture started'
           WHEN 'CAPTURING>CAPTURED' THEN format('captured %s of %s %s', p.captured_amount, p.amount, p.currency)
           WHEN 'CAPTURING>AUTHORIZED' THEN 'capture not made, the authorization stands'
           WHEN 'CAPTURING>EXPIRED' THEN 'capture refused, the authorization had lapsed'
           WHEN 'AUTHORIZED>CANCELING' THEN 'void started (cancel)'
           WHEN 'CANCELING>CANCELED' THEN 'authorization voided (canceled)'
           WHEN 'CANCELING>AUTHORIZED' THEN 'void not made, the authorization stands'
           WHEN 'AUTHORIZED>EXPIRING' THEN 'void started (expiry)'
           WHEN 'EXPIRING>EXPIRED' THEN 'authorization voided (expired)'
           WHEN 'EXPIRING>AUTHORIZED' THEN 'void not made, the authorization stands'
       END, ''),
       format('attempt %s, by %s', t.attempt, coalesce(t.actor, 'api'))
  FROM payment_transitions t, p WHERE t.payment_id = $1
UNION ALL
SELECT c.started_at, 'psp',
       format('PSP %s: %s', CASE WHEN c.kind = 'charge' AND c.attempt > 0 THEN 'charge re-sent' ELSE c.kind END,
              c.outcome),
       format('%s, %s ms', CASE WHEN c.attempt = 0 THEN 'capture' ELSE 'resolver attempt ' || c.attempt END,
              c.duration_ms)
  FROM psp_calls c WHERE c.payment_id = $1
UNION ALL
-- The capture's charge when it captured the payment: on the payment row (V97), when it was over
SELECT captured_at - make_interval(secs => charge_ms / 1000.0), 'psp', 'PSP charge: captured ' || psp_reference,
       format('capture, %s ms', charge_ms)
  FROM p WHERE charge_ms IS NOT NULL
UNION ALL
SELECT r.at, 'replay', format('idempotency key %s: %s', r.key, replace(r.answer, '_', ' ')),
       CASE r.answer WHEN 'replayed' THEN format('stored answer %s replayed', r.response_status)
                     WHEN 'in_progress' THEN 'answered 409, the first request still in progress'
                     ELSE 'answered 422, the key was used with another request' END
  FROM idempotency_replays r JOIN p ON r.merchant_id = p.merchant_id WHERE r.resource_id = $1
UNION ALL
SELECT k.created_at, 'idempotency', 'idempotency key ' || k.key,
       format('%s, answer %s, completed %s, final %s', k.status, coalesce(k.response_status::text, '-'),
              coalesce(k.completed_at::text, '-'), coalesce(k.final_at::text, '-'))
  FROM idempotency_keys k JOIN p ON k.merchant_id = p.merchant_id
 WHERE k.resource_type IN ('payment', 'refund') AND k.resource_id::text IN (SELECT ref FROM refs)
UNION ALL
SELECT w.received_at, 'webhook', 'webhook ' || w.type,
       format('event %s, outcome %s, processed %s', w.event_id, coalesce(w.outcome, '-'),
              coalesce(w.processed_at::text, '-'))
  FROM psp_webhook_events w WHERE w.payload -> 'data' ->> 'reference' IN (SELECT ref FROM refs)
UNION ALL
SELECT created_at, 'ledger', format('ledger %s %s %s', kind, account, amount),
       format('%s, balance of %s for this payment: %s %s', reference, account, balance, currency)
  FROM ledger
UNION ALL
SELECT o.created_at, 'outbox', 'outbox ' || o.event_type || ' written',
       format('topic %s, event %s, sent %s', o.topic, o.event_id, coalesce(o.sent_at::text, 'not yet'))
  FROM outbox o WHERE o.key = $1::text
UNION ALL
SELECT o.sent_at, 'outbox', 'outbox ' || o.event_type || ' sent to Kafka', format('topic %s', o.topic)
  FROM outbox o WHERE o.key = $1::text AND o.sent_at IS NOT NULL
UNION ALL
SELECT r.created_at, 'refund', format('refund %s requested', r.id),
       format('%s %s, reason %s', r.amount, r.currency, coalesce(r.reason, '-'))
  FROM refunds r WHERE r.payment_id = $1
UNION ALL
SELECT coalesce(r.completed_at, r.updated_at), 'refund', format('refund %s %s', r.id, r.status),
       format('attempts %s, failure %s, last error %s, next attempt %s', r.attempts,
              coalesce(r.failure_code, '-'), coalesce(r.last_error, '-'),
              coalesce(r.next_attempt_at::text, '-'))
  FROM refunds r WHERE r.payment_id = $1 AND (r.status <> 'PENDING' OR r.attempts > 0)
UNION ALL
SELECT d.dead_lettered_at, 'dlq', format('refund command dead-lettered, refund %s', coalesce(d.refund_id::text, '-')),
       format('%s partition %s offset %s: %s', d.topic, d.kafka_partition, d.kafka_offset, d.reason)
  FROM refund_dead_letters d WHERE d.payment_id = $1
UNION ALL
SELECT s.settled_at, 'settlement', format('settlement line %s of %s', s.type, s.business_date),
       format('line %s, %s %s, fee %s, PSP reference %s', s.line_no, s.amount, s.currency, s.fee,
              s.psp_reference)
  FROM psp_settlements s WHERE s.reference IN (SELECT ref FROM refs)
UNION ALL
SELECT b.opened_at, 'recon', format('reconciliation break %s (%s)', b.break_type, b.status),
       format('date %s, ours %s, PSP %s %s, seen %s times%s', b.business_date,
              coalesce(b.internal_amount::text, '-'), coalesce(b.psp_amount::text, '-'),
              coalesce(b.currency, ''), b.times_seen, coalesce(', ' || b.resolution, ''))
  FROM recon_breaks b WHERE b.reference IN (SELECT ref FROM refs)
UNION ALL
SELECT q.created_at, 'operations', format('operations item #%s %s (%s)', q.id, q.reason, q.status),
       coalesce(q.details ->> 'resolution', '')
  FROM operations_queue q WHERE q.subject_id IN (SELECT ref FROM refs)
UNION ALL
SELECT a.at, 'operator', format('%s by %s (%s)', a.action, a.operator, a.channel), coalesce(a.note, '')
  FROM operator_audit a
 WHERE a.subject IN (SELECT 'operations_item:' || q.id FROM operations_queue q
                      WHERE q.subject_id IN (SELECT ref FROM refs))

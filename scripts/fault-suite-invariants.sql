-- The invariants the fault suite checks after the run (scripts/fault-suite.sh, docs/fault-suite.md): each is a named
-- query that counts its violations. Besides the schema they read the run's evidence, loaded into temporary tables:
--   psp (reference, charge_movements, refund_movements, captured_amount, void_movements)
--                                                         the sandbox's counters per payment and refund
--   kafka (part, off, key, event_id)                      the payment-events topic
--   client (key, payment_id, code)                        what the load's clients were answered
--   webhook (event_id, copy, status, reference)           the sandbox's webhook deliveries
--   ops (payment_id, op, key, amount, code)               the load client's authorizations (op authorize, the amount
--                                                         authorized), captures (the amount asked), cancels, refunds,
--                                                         each with its final answer (scripts/load-client.sh; empty
--                                                         in the upgrade scenario)
-- Format: a "-- name: <name>" line, then the query, ending with ";" at the end of a line.

-- name: no payment charged twice at the PSP
SELECT count(*) FROM psp WHERE charge_movements > 1;

-- name: every CAPTURED payment charged exactly once
SELECT count(*) FROM payments p LEFT JOIN psp ON psp.reference = p.id::text WHERE p.status = 'CAPTURED' AND
  coalesce(psp.charge_movements, 0) <> 1;

-- name: no FAILED payment charged
SELECT count(*) FROM payments p JOIN psp ON psp.reference = p.id::text WHERE p.status = 'FAILED' AND
  psp.charge_movements <> 0;

-- name: refunded_amount <= captured amount
-- (coalesce(captured_amount, amount): a MANUAL payment may capture less than it authorized, V98)
SELECT count(*) FROM payments WHERE refunded_amount > coalesce(captured_amount, amount);

-- name: refunded_amount = reserved + succeeded refunds
SELECT count(*) FROM payments p WHERE refunded_amount <> (SELECT coalesce(sum(amount), 0) FROM refunds r WHERE
  r.payment_id = p.id AND r.status IN ('PENDING', 'SUCCEEDED'));

-- name: no refund left PENDING
SELECT count(*) FROM refunds WHERE status = 'PENDING';

-- name: every PSP refund matches a SUCCEEDED refund (one movement each, none for others)
SELECT count(*) FROM refunds r LEFT JOIN psp ON psp.reference = r.id::text WHERE coalesce(psp.refund_movements, 0)
  <> CASE WHEN r.status = 'SUCCEEDED' THEN 1 ELSE 0 END;

-- name: one REFUND ledger transaction per SUCCEEDED refund, none otherwise
SELECT count(*) FROM refunds r WHERE (r.status = 'SUCCEEDED') <> EXISTS (SELECT 1 FROM ledger_transactions t WHERE
  t.kind = 'REFUND' AND t.reference = r.id::text);

-- name: ledger psp_receivable = captured - refunded, per currency
-- (without the reconciler's FEE transactions: the upgrade scenario's walkthroughs reconcile before the check)
SELECT count(*) FROM (SELECT currency, sum(amount) AS want FROM (SELECT currency, coalesce(captured_amount, amount) AS
  amount FROM payments WHERE status = 'CAPTURED' UNION ALL SELECT currency, -amount FROM refunds WHERE status = 'SUCCEEDED') x GROUP BY currency) w
  FULL JOIN (SELECT e.currency, sum(e.amount) AS got FROM ledger_entries e JOIN ledger_transactions t ON t.id =
  e.transaction_id WHERE e.account = 'psp_receivable' AND t.kind <> 'FEE' GROUP BY e.currency) g USING (currency)
  WHERE coalesce(want, 0) <> coalesce(got, 0);

-- name: ledger merchant_payable per merchant = -(captured - refunded)
SELECT count(*) FROM (SELECT merchant_id, currency, sum(amount) AS want FROM (SELECT merchant_id, currency,
  -coalesce(captured_amount, amount) AS amount FROM payments WHERE status = 'CAPTURED' UNION ALL SELECT merchant_id, currency, amount FROM refunds
  WHERE status = 'SUCCEEDED') x GROUP BY merchant_id, currency) w FULL JOIN (SELECT t.merchant_id, e.currency,
  sum(e.amount) AS got FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE e.account =
  'merchant_payable' GROUP BY t.merchant_id, e.currency) g USING (merchant_id, currency) WHERE coalesce(want, 0) <>
  coalesce(got, 0);

-- name: every webhook delivery answered 2xx (none given up or still pending)
SELECT count(*) FROM webhook WHERE status NOT IN ('DELIVERED', 'DROPPED');

-- name: every delivered webhook event stored once, no dropped one
SELECT (SELECT count(DISTINCT w.event_id) FROM webhook w WHERE w.status = 'DELIVERED' AND NOT EXISTS (SELECT 1 FROM
  psp_webhook_events e WHERE e.event_id = w.event_id)) + (SELECT count(*) FROM psp_webhook_events e WHERE NOT EXISTS
  (SELECT 1 FROM webhook w WHERE w.event_id = e.event_id AND w.status = 'DELIVERED'));

-- name: no webhook conflict or unknown subject
SELECT count(*) FROM psp_webhook_events WHERE outcome IS NULL OR outcome IN ('conflict', 'unknown_payment',
  'unknown_refund');

-- name: ledger balanced per transaction
SELECT count(*) FROM (SELECT 1 FROM ledger_entries GROUP BY transaction_id, currency HAVING sum(amount) <> 0) t;

-- name: ledger balanced in total
SELECT count(*) FROM (SELECT 1 FROM ledger_entries GROUP BY currency HAVING sum(amount) <> 0) t;

-- name: one CAPTURE ledger transaction per CAPTURED payment, none otherwise
SELECT count(*) FROM payments p WHERE (p.status = 'CAPTURED') <> EXISTS (SELECT 1 FROM ledger_transactions t WHERE
  t.kind = 'CAPTURE' AND t.reference = p.id::text);

-- name: every outbox row published
SELECT count(*) FROM outbox WHERE sent_at IS NULL;

-- name: every payment-events row on Kafka
SELECT count(*) FROM outbox o WHERE o.topic = 'payment-events' AND NOT EXISTS (SELECT 1 FROM kafka k WHERE
  k.event_id = o.event_id::text);

-- name: each payment's events in commit order on Kafka
SELECT count(*) FROM (SELECT o.event_id, row_number() OVER (PARTITION BY o.key ORDER BY o.id) AS want, row_number()
  OVER (PARTITION BY o.key ORDER BY f.part, f.off) AS got FROM outbox o JOIN (SELECT DISTINCT ON (event_id)
  event_id, part, off FROM kafka ORDER BY event_id, part, off) f ON f.event_id = o.event_id::text WHERE o.topic =
  'payment-events') t WHERE want <> got;

-- name: one partition per payment on Kafka
SELECT count(*) FROM (SELECT key FROM kafka GROUP BY key HAVING count(DISTINCT part) > 1) t;

-- name: evidence: payments exist, were answered, are on Kafka
SELECT CASE WHEN (SELECT count(*) FROM payments) = 0 OR (SELECT count(*) FROM client WHERE payment_id <> '') = 0 OR
  (SELECT count(*) FROM kafka) = 0 OR (SELECT count(*) FROM psp) = 0 OR (SELECT count(*) FROM psp_webhook_events) =
  0 OR (SELECT count(*) FROM refunds WHERE status = 'SUCCEEDED') = 0 THEN 1 ELSE 0 END;

-- name: no unexpected answer to a valid capture
SELECT count(*) FROM client WHERE code LIKE 'unexpected%' OR code NOT IN ('201', '202', '402', 'unresolved');

-- name: every answered payment exists
SELECT count(*) FROM client c WHERE c.payment_id <> '' AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.id::text =
  c.payment_id);

-- name: answered status matches or moved on (201 CAPTURED, 402 FAILED)
-- (an authorization's 201: its own check below)
SELECT count(*) FROM client c JOIN payments p ON p.id::text = c.payment_id WHERE (c.code = '201' AND p.status <>
  'CAPTURED' AND NOT EXISTS (SELECT 1 FROM ops o WHERE o.op = 'authorize' AND o.key = c.key)) OR (c.code = '402' AND
  p.status <> 'FAILED');

-- name: no idempotency key maps to two payments
-- The key's row names the payment its client was answered (a key row lost and claimed again by a retry names another
-- one), and, since each client key carries an orderId of its own, no two payments of the clients' merchant share an
-- order_id (a second payment created under one key, whichever payment its row names).
SELECT (SELECT count(*) FROM client c JOIN payments p ON p.id::text = c.payment_id LEFT JOIN idempotency_keys k ON
  k.merchant_id = p.merchant_id AND k.key = c.key WHERE k.resource_id IS DISTINCT FROM p.id) + (SELECT count(*) FROM
  (SELECT 1 FROM payments WHERE merchant_id IN (SELECT p.merchant_id FROM client c JOIN payments p ON p.id::text =
  c.payment_id) GROUP BY merchant_id, order_id HAVING count(*) > 1) t);

-- name: every client key answered (retried until settled)
SELECT count(*) FROM client WHERE payment_id = '';

-- name: no PROCESSING/UNKNOWN left outside the operations queue
SELECT count(*) FROM payments p WHERE status IN ('PROCESSING','UNKNOWN') AND NOT EXISTS (SELECT 1 FROM
  operations_queue q WHERE q.subject_type = 'payment' AND q.subject_id = p.id::text);

-- Manual capture (issue 42, docs/api.md "Manual capture"): nothing is captured beyond its authorization, here or at the
-- PSP, and the PSP's captures and voids are ours; every authorization ends in a final state.

-- name: manual: no capture above its authorization (ours)
SELECT count(*) FROM payments WHERE captured_amount IS NOT NULL AND (capture_method <> 'MANUAL' OR captured_amount < 1
  OR captured_amount > amount);

-- name: manual: no capture above its authorization at the PSP
SELECT count(*) FROM psp JOIN payments p ON p.id::text = psp.reference WHERE psp.captured_amount > p.amount;

-- name: manual: the PSP captured what we captured (CAPTURED: its amount, once; else nothing)
SELECT count(*) FROM payments p LEFT JOIN psp ON psp.reference = p.id::text WHERE p.capture_method = 'MANUAL' AND
  (coalesce(psp.captured_amount, 0) <> CASE WHEN p.status = 'CAPTURED' THEN p.captured_amount ELSE 0 END OR
  coalesce(psp.charge_movements, 0) <> CASE WHEN p.status = 'CAPTURED' THEN 1 ELSE 0 END);

-- name: manual: no void after a capture at the PSP (voids + charges <= 1)
SELECT count(*) FROM psp WHERE void_movements + charge_movements > 1;

-- name: manual: CANCELED voided once at the PSP, AUTHORIZED/CAPTURED never
SELECT count(*) FROM payments p LEFT JOIN psp ON psp.reference = p.id::text WHERE p.capture_method = 'MANUAL' AND
  p.status IN ('AUTHORIZED', 'CAPTURED', 'CANCELED') AND coalesce(psp.void_movements, 0) <> CASE WHEN p.status =
  'CANCELED' THEN 1 ELSE 0 END;

-- name: manual: every 201 authorization a MANUAL payment of its amount, ended
-- (AUTHORIZED, CAPTURED, CANCELED or EXPIRED)
SELECT count(*) FROM ops o LEFT JOIN payments p ON p.id::text = o.payment_id WHERE o.op = 'authorize' AND o.code = '201'
  AND (p.id IS NULL OR p.capture_method <> 'MANUAL' OR p.amount <> o.amount OR p.status NOT IN ('AUTHORIZED',
  'CAPTURED', 'CANCELED', 'EXPIRED'));

-- name: manual: none left AUTHORIZING/CAPTURING/CANCELING/EXPIRING after settle
SELECT count(*) FROM payments WHERE status IN ('AUTHORIZING', 'CAPTURING', 'CANCELING', 'EXPIRING');

-- name: manual: every capture and cancel answered 200/202 (retried until settled)
-- (nothing else moves the load's authorizations: a 409 payment_not_authorized or another refusal is a fault's trace)
SELECT count(*) FROM ops WHERE op IN ('capture', 'cancel') AND code NOT IN ('200', '202');

-- name: manual: answered capture CAPTURED with the amount asked, cancel CANCELED
SELECT count(*) FROM ops o LEFT JOIN payments p ON p.id::text = o.payment_id WHERE o.code IN ('200', '202') AND
  ((o.op = 'capture' AND (p.status IS DISTINCT FROM 'CAPTURED' OR p.captured_amount IS DISTINCT FROM o.amount)) OR
  (o.op = 'cancel' AND p.status IS DISTINCT FROM 'CANCELED'));

-- name: every refund of the load answered 202 (retried until settled)
SELECT count(*) FROM ops WHERE op = 'refund' AND code <> '202';

-- name: manual: refunds within the captured amount (none unless CAPTURED)
SELECT count(*) FROM payments p WHERE p.capture_method = 'MANUAL' AND (SELECT coalesce(sum(r.amount), 0) FROM refunds r
  WHERE r.payment_id = p.id AND r.status IN ('PENDING', 'SUCCEEDED')) > CASE WHEN p.status = 'CAPTURED' THEN
  p.captured_amount ELSE 0 END;

-- name: evidence: manual flows happened (partial/full captures, cancels, refunds)
-- (when the load authorized: the upgrade scenario's only manual payment is its walkthrough's)
SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM ops WHERE op = 'authorize') THEN 0 WHEN NOT EXISTS (SELECT 1 FROM payments
  WHERE status = 'CAPTURED' AND captured_amount < amount) OR NOT EXISTS (SELECT 1 FROM payments WHERE capture_method =
  'MANUAL' AND status = 'CAPTURED' AND captured_amount = amount) OR NOT EXISTS (SELECT 1 FROM payments WHERE
  capture_method = 'MANUAL' AND status = 'CANCELED') OR NOT EXISTS (SELECT 1 FROM refunds r JOIN payments p ON p.id =
  r.payment_id WHERE p.capture_method = 'MANUAL' AND r.status = 'SUCCEEDED') OR NOT EXISTS (SELECT 1 FROM psp WHERE
  captured_amount > 0) OR NOT EXISTS (SELECT 1 FROM psp WHERE void_movements > 0) THEN 1 ELSE 0 END;

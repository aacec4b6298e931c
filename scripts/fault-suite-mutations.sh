# shellcheck shell=bash
# Hooks (FAULT_HOOKS) for scripts/fault-suite.sh that show the manual-capture invariants can fail: after the checks,
# each is run again on rows or evidence corrupted inside a transaction that is never committed (psql ends, the
# transaction is rolled back; triggers off with session_replication_role), and must then count a violation. A
# mutation that leaves its check at 0 is a violation of the run. docs/fault-suite.md, "Manual capture".
#   FAULT_HOOKS=scripts/fault-suite-mutations.sh scripts/fault-suite.sh

query_of() { # NAME: the query of the check NAME in fault-suite-invariants.sql
  awk -v n="-- name: $1" '$0 == n {on = 1; next} on && /^--/ {next} on && NF {print} on && /;$/ {exit}' \
    scripts/fault-suite-invariants.sql
}

mutate() { # NAME MUTATION_SQL
  local got
  got=$(evidence_sql "BEGIN; SET LOCAL session_replication_role = replica; $2
$(query_of "$1")")
  [[ $got =~ ^[1-9][0-9]*$ ]] || VIOLATIONS=$((VIOLATIONS + 1))
  printf 'mutation: %-68s %s\n' "$1" "$([[ $got =~ ^[1-9][0-9]*$ ]] && echo "fails ($got)" || echo "NOT SEEN ($got)")"
}

fault_report() {
  local captured="(SELECT id FROM payments WHERE capture_method = 'MANUAL' AND status = 'CAPTURED' LIMIT 1)"
  local canceled="(SELECT id FROM payments WHERE capture_method = 'MANUAL' AND status = 'CANCELED' LIMIT 1)"
  echo
  mutate "manual: no capture above its authorization (ours)" "ALTER TABLE payments DROP CONSTRAINT
    captured_within_authorized; UPDATE payments SET captured_amount = amount + 1 WHERE id = $captured;"
  mutate "manual: no capture above its authorization at the PSP" \
    "UPDATE psp SET captured_amount = 1000000000 WHERE reference = $captured::text;"
  mutate "manual: the PSP captured what we captured (CAPTURED: its amount, once; else nothing)" \
    "UPDATE psp SET captured_amount = captured_amount - 1 WHERE reference = $captured::text;"
  mutate "manual: no void after a capture at the PSP (voids + charges <= 1)" \
    "UPDATE psp SET void_movements = 1 WHERE reference = $captured::text;"
  mutate "manual: CANCELED voided once at the PSP, AUTHORIZED/CAPTURED never" \
    "UPDATE psp SET void_movements = 0 WHERE reference = $canceled::text;"
  mutate "manual: every 201 authorization a MANUAL payment of its amount, ended" \
    "UPDATE payments SET status = 'CAPTURING' WHERE id = $captured;"
  mutate "manual: none left AUTHORIZING/CAPTURING/CANCELING/EXPIRING after settle" \
    "UPDATE payments SET status = 'CAPTURING' WHERE id = $captured;"
  mutate "manual: every capture and cancel answered 200/202 (retried until settled)" \
    "UPDATE ops SET code = '409:payment_not_authorized' WHERE ctid = (SELECT ctid FROM ops WHERE op = 'capture' LIMIT 1);"
  mutate "manual: answered capture CAPTURED with the amount asked, cancel CANCELED" "UPDATE ops SET amount = amount + 1
    WHERE ctid = (SELECT ctid FROM ops WHERE op = 'capture' AND code = '200' LIMIT 1);"
  mutate "every refund of the load answered 202 (retried until settled)" \
    "UPDATE ops SET code = 'unresolved:500' WHERE ctid = (SELECT ctid FROM ops WHERE op = 'refund' LIMIT 1);"
  mutate "manual: refunds within the captured amount (none unless CAPTURED)" "UPDATE refunds r SET amount =
    p.captured_amount + 1 FROM payments p WHERE p.id = r.payment_id AND r.id = (SELECT r2.id FROM refunds r2 JOIN
    payments p2 ON p2.id = r2.payment_id WHERE p2.capture_method = 'MANUAL' LIMIT 1);"
  mutate "evidence: manual flows happened (partial/full captures, cancels, refunds)" "UPDATE psp SET void_movements = 0;"
  mutate "answered status matches or moved on (201 CAPTURED, 402 FAILED)" "DELETE FROM ops WHERE op = 'authorize';"
}

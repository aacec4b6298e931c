-- Idempotency keys are purged only once their payment or refund is final, and their retention counts from that
-- final outcome (issue 18, docs/api.md "Retention"). A key completed with a 202 (a payment left UNKNOWN, a refund
-- reserved PENDING) must outlive the retention as long as its resource is not final: purged earlier, a retry with
-- the same key would create and charge (or refund) a second time.

-- When the key's resource reached its final outcome (payment CAPTURED/FAILED, refund SUCCEEDED/FAILED); NULL while
-- it has not. Set by the statement that completes the key with a final answer (payments-api), or, for a key
-- completed earlier with a 202, by the triggers below, in the statement that records the final outcome.
ALTER TABLE idempotency_keys
    ADD COLUMN final_at timestamptz,
    ADD CONSTRAINT final_only_when_completed CHECK (final_at IS NULL OR status = 'COMPLETED');

-- Keys already stored: final as of their resource's outcome (a key without a resource, which no code writes, as of
-- its completion).
UPDATE idempotency_keys k SET final_at = COALESCE(p.captured_at, p.updated_at)
  FROM payments p
 WHERE k.resource_type = 'payment' AND p.id = k.resource_id AND k.status = 'COMPLETED'
   AND p.status IN ('CAPTURED', 'FAILED');
UPDATE idempotency_keys k SET final_at = COALESCE(r.completed_at, r.updated_at)
  FROM refunds r
 WHERE k.resource_type = 'refund' AND r.id = k.resource_id AND k.status = 'COMPLETED'
   AND r.status IN ('SUCCEEDED', 'FAILED');
UPDATE idempotency_keys SET final_at = COALESCE(completed_at, created_at)
 WHERE resource_id IS NULL AND status = 'COMPLETED';

-- The purge walks the final keys by age. The keys not final yet (in progress, or completed with a 202) are found by
-- their resource: this index replaces V20's in-progress one (a key in progress is not final either), and the
-- purge no longer reads created_at.
CREATE INDEX idempotency_keys_final_at ON idempotency_keys (final_at) WHERE final_at IS NOT NULL;
CREATE INDEX idempotency_keys_not_final_resource ON idempotency_keys (resource_type, resource_id)
    WHERE final_at IS NULL;
DROP INDEX idempotency_keys_in_progress_resource;
DROP INDEX idempotency_keys_created;

-- A payment or refund whose key was completed with a 202 becomes final: its key's retention starts now.
CREATE FUNCTION idempotency_keys_resource_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE idempotency_keys SET final_at = now()
     WHERE resource_type = TG_ARGV[0] AND resource_id = NEW.id AND status = 'COMPLETED' AND final_at IS NULL;
    RETURN NULL;
END $$;
-- PROCESSING -> CAPTURED/FAILED completes an in-progress key with the final answer in the same statement
-- (PaymentRepository.recordOutcomes), so only UNKNOWN -> final needs the trigger (and the capture path pays nothing).
CREATE TRIGGER payments_final_key AFTER UPDATE OF status ON payments
    FOR EACH ROW WHEN (OLD.status = 'UNKNOWN' AND NEW.status IN ('CAPTURED', 'FAILED'))
    EXECUTE FUNCTION idempotency_keys_resource_final('payment');
CREATE TRIGGER refunds_final_key AFTER UPDATE OF status ON refunds
    FOR EACH ROW WHEN (OLD.status = 'PENDING' AND NEW.status IN ('SUCCEEDED', 'FAILED'))
    EXECUTE FUNCTION idempotency_keys_resource_final('refund');

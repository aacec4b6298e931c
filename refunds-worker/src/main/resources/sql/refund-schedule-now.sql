-- The hand-off (RefundRepository.scheduleNow, docs/refunds.md): a PENDING refund that nobody scheduled ($1) made due
-- at once for the pending-refund sync; no row when a lease or a retry already owns it, or it is final.
UPDATE refunds SET next_attempt_at = now()
 WHERE id = $1 AND status = 'PENDING'
   -- num_nulls, not "IS NULL": that matches V30's partial index of every unscheduled PENDING refund, which a generic
   -- plan may then read whole (the backlog) instead of the primary key
   AND num_nulls(next_attempt_at) = 1

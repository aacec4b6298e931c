-- The capture's PSP charge on the payment row when it is a plain success (issue 38: the capture path's cost). V83
-- wrote a psp_calls row (a heap row and an index entry) for every PSP call, for the console's payment story; the
-- most frequent one by far, the capture's own charge (attempt 0) answered "captured" and moving the payment to
-- CAPTURED, now leaves only its duration here, set by the outcome statement's update of the payment row that it
-- makes anyway (record-outcome.sql). The story shows it from the row: "captured <psp_reference>", its duration, at
-- captured_at minus the duration. Every other call (a decline, an error or timeout, a charge whose outcome no longer
-- applied, the resolver's look-ups and re-sent charges) keeps its psp_calls row.
--
-- Expand only: the previous release still writes a psp_calls row for every call and leaves charge_ms null, so each
-- call is recorded in exactly one of the two places; while it runs, its console story does not show the plain
-- successes the new release recorded here.
ALTER TABLE payments ADD COLUMN charge_ms integer;
-- NOT VALID: checked for every row written from now on without scanning payments under its lock (all null so far).
ALTER TABLE payments ADD CONSTRAINT payments_charge_ms CHECK (charge_ms >= 0) NOT VALID;

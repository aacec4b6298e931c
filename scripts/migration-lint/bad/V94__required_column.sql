-- expect: adding-required-field
-- The previous release inserts payments without this column: its inserts would fail.
ALTER TABLE payments ADD COLUMN note text NOT NULL;

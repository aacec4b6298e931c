-- expect: constraint-missing-not-valid
-- Scans the table while holding off writes: add it NOT VALID, then VALIDATE CONSTRAINT in a later migration.
ALTER TABLE payments ADD CONSTRAINT payments_note_short CHECK (length(note) <= 200);

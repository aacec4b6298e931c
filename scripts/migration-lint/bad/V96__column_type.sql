-- expect: changing-column-type
-- Rewrites the table under an ACCESS EXCLUSIVE lock; the previous release reads the old type.
ALTER TABLE payments ALTER COLUMN amount_minor TYPE numeric;

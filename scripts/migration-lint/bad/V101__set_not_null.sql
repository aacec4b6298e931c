-- expect: adding-not-nullable-field
-- Scans the whole table under an ACCESS EXCLUSIVE lock (add a NOT VALID CHECK, validate it, then SET NOT NULL).
ALTER TABLE payments ALTER COLUMN description SET NOT NULL;

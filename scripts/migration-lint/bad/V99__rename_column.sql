-- expect: renaming-column
-- The previous release's queries name the old column.
ALTER TABLE payments RENAME COLUMN description TO statement_descriptor;

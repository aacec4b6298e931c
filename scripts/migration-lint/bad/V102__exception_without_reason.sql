-- expect: squawk-ignore without a
-- A squawk-ignore nobody explained.
-- squawk-ignore ban-drop-column
ALTER TABLE payments DROP COLUMN description;

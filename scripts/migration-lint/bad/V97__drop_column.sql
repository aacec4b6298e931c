-- expect: ban-drop-column
-- The previous release still selects it.
ALTER TABLE payments DROP COLUMN description;

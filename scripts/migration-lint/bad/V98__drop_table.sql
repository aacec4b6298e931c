-- expect: ban-drop-table
-- The previous release still reads it.
DROP TABLE operations_queue;

-- expect: ban-drop-table
-- 93.1 is above the baseline V93: linted.
DROP TABLE operations_queue;

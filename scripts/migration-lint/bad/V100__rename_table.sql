-- expect: renaming-table
ALTER TABLE operations_queue RENAME TO operator_items;

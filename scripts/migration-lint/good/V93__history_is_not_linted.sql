-- At the baseline: history, not linted (a DROP TABLE here would be refused in V94).
DROP TABLE operations_queue;

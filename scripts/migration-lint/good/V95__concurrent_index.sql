-- Alone in its migration: Flyway runs a CONCURRENTLY statement outside a transaction.
CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_note ON payments (note);

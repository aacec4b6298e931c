-- expect: require-concurrent-index-creation
-- Holds off every write to payments while the index builds.
CREATE INDEX payments_note ON payments (note);

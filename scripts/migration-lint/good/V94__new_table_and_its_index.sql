-- A table and its index in the same migration: nobody else can use the table yet.
SET LOCAL lock_timeout = '2s';
CREATE TABLE payment_notes (
    payment_id uuid PRIMARY KEY REFERENCES payments (id),
    note text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payment_notes_created ON payment_notes (created_at);
ALTER TABLE payments ADD COLUMN note text;
ALTER TABLE payments ADD COLUMN note_version bigint NOT NULL DEFAULT 0;
ALTER TABLE payments ADD CONSTRAINT payments_note_short CHECK (length(note) <= 200) NOT VALID;

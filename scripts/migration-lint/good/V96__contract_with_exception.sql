-- The contract step of V94's note, a release after nothing reads old_note any more.
-- lint-exception: old_note unread since the release that shipped V94 (fixture)
-- squawk-ignore ban-drop-column
ALTER TABLE payments DROP COLUMN old_note;
ALTER TABLE payments VALIDATE CONSTRAINT payments_note_short;

-- Definitions: the draft's manifest hash (so a client can tell whether the
-- draft differs from the latest version) and when it was last saved.

ALTER TABLE definition
    ADD COLUMN draft_hash     text,
    ADD COLUMN draft_saved_at timestamptz;

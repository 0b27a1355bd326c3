-- Whose files a hard delete may delete, and a cache that serves only bytes it can vouch for
-- (docs/files.md, "Whose files a hard delete deletes" and "The cache").

-- The files this device uploaded, each with the one message it uploaded it for (its id and the
-- timetoken it was published at: a later message reusing the id is not it): that message's hard
-- delete deletes the file without asking the server (FileOwnership).
CREATE TABLE uploaded_files (
    channel_id         TEXT NOT NULL,
    file_id            TEXT NOT NULL,
    message_id         TEXT NOT NULL,
    message_timetoken  INTEGER NOT NULL,
    PRIMARY KEY (channel_id, file_id)
) WITHOUT ROWID;
CREATE INDEX uploaded_files_message ON uploaded_files(message_id);

-- A file named by a hard-deleted message this device did not upload for it is deleted only when
-- the server shows no older message of the channel naming it: `named_before` holds the deleted
-- message's timetoken. NULL: this device's own upload (a redone upload, a withdrawn send, the
-- message it was uploaded for), deleted without asking.
ALTER TABLE file_orphans ADD COLUMN named_before INTEGER;

-- The cache is keyed by the channel and by the crypto configuration that produced its bytes
-- (`crypto`: a fingerprint of the cipher key and mode, 'none' without one, 'plain' for this
-- device's own plaintext, which any configuration may read). Entries made before could hold
-- ciphertext cached without a key, and were not keyed by channel: they go (the area's sweep
-- removes their bytes), and are downloaded again when read.
DROP TABLE file_cache;
CREATE TABLE file_cache (
    channel_id  TEXT NOT NULL,
    file_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    crypto      TEXT NOT NULL,
    size        INTEGER NOT NULL,
    local_name  TEXT NOT NULL,
    last_used   REAL NOT NULL,
    PRIMARY KEY (channel_id, file_id, name, crypto)
) WITHOUT ROWID;
CREATE INDEX file_cache_last_used ON file_cache(last_used);

-- Files (docs/files.md).

-- The files a message carries (JSON array of ChatFile: id, name, size, mimeType, url): a file
-- message's file, a Chat SDK text message's `files`, or the files a pending send uploads.
ALTER TABLE messages ADD COLUMN files TEXT;

-- The files of a pending send, one row each, in order: what was copied into the store's attachment
-- area at enqueue (local_name, relative to the area) and how far its upload got. Written by the
-- outbox's file steps (Replicator/Outbox/Outbox+Files.swift); removed with the op.
--   file_id/upload_name: the server's id and name for the current upload (generate-upload-url);
--   uploaded: 1 once storage accepted the bytes (204);
--   event_sent: 1 once the `store=0` file event of the Chat SDK's shape was attempted (at most once).
CREATE TABLE file_uploads (
    op_id          TEXT NOT NULL,
    position       INTEGER NOT NULL,
    channel_id     TEXT NOT NULL,
    name           TEXT NOT NULL,
    mime_type      TEXT NOT NULL,
    size           INTEGER NOT NULL,
    local_name     TEXT NOT NULL,
    file_id        TEXT,
    upload_name    TEXT,
    expires_at     REAL,
    uploaded       INTEGER NOT NULL DEFAULT 0,
    event_sent     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (op_id, position)
) WITHOUT ROWID;

-- Files uploaded to PubNub that no message will reference (an upload redone, a send discarded):
-- deleted from PubNub by the next drain, then removed here.
CREATE TABLE file_orphans (
    channel_id  TEXT NOT NULL,
    file_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    PRIMARY KEY (channel_id, file_id)
) WITHOUT ROWID;

-- The download cache (bounded, least recently used evicted): one row per cached file, its bytes
-- (decrypted) in the attachment area's cache folder under local_name.
CREATE TABLE file_cache (
    file_id     TEXT NOT NULL,
    name        TEXT NOT NULL,
    channel_id  TEXT NOT NULL,
    size        INTEGER NOT NULL,
    local_name  TEXT NOT NULL,
    last_used   REAL NOT NULL,
    PRIMARY KEY (file_id, name)
) WITHOUT ROWID;
CREATE INDEX file_cache_last_used ON file_cache(last_used);

-- What a DataSync server keeps beside a user's, channel's or membership's chat fields
-- (ReplicaModel.ObjectMetadata; docs/datasync.md, "The mapping" and "Expiry"): the class and its
-- version, when the server deletes the object (`expires_at` as given, `expires_ns` to compare),
-- and a membership's own id (`backend_id`, NULL on users and channels: the three tables share one
-- column list). App Context objects leave them NULL.
ALTER TABLE users ADD COLUMN expires_at TEXT;
ALTER TABLE users ADD COLUMN expires_ns INTEGER;
ALTER TABLE users ADD COLUMN class_name TEXT;
ALTER TABLE users ADD COLUMN class_version INTEGER;
ALTER TABLE users ADD COLUMN backend_id TEXT;
ALTER TABLE channels ADD COLUMN expires_at TEXT;
ALTER TABLE channels ADD COLUMN expires_ns INTEGER;
ALTER TABLE channels ADD COLUMN class_name TEXT;
ALTER TABLE channels ADD COLUMN class_version INTEGER;
ALTER TABLE channels ADD COLUMN backend_id TEXT;
ALTER TABLE members ADD COLUMN expires_at TEXT;
ALTER TABLE members ADD COLUMN expires_ns INTEGER;
ALTER TABLE members ADD COLUMN class_name TEXT;
ALTER TABLE members ADD COLUMN class_version INTEGER;
ALTER TABLE members ADD COLUMN backend_id TEXT;

-- The expiry sweep and the warnings read only objects that expire; partial, so App Context
-- stores carry empty indexes.
CREATE INDEX users_expiry ON users(expires_ns) WHERE expires_ns IS NOT NULL;
CREATE INDEX channels_expiry ON channels(expires_ns) WHERE expires_ns IS NOT NULL;
CREATE INDEX members_expiry ON members(expires_ns) WHERE expires_ns IS NOT NULL;
-- A DataSync delete event names only the membership's own id.
CREATE INDEX members_backend_id ON members(backend_id) WHERE backend_id IS NOT NULL;

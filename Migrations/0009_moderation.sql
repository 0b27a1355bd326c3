-- Chat SDK moderation (docs/chat.md, "Moderation"). What the Chat SDK keeps out of sight gets
-- its own tables; the entity tables never hold it (ReplicaModel/ChatModeration.swift names it).

-- The current user's restrictions, one row per channel: read from the user's memberships of
-- `PUBNUB_INTERNAL_MODERATION_<channel>` (each listing) and from live `moderation` and membership
-- events. A lifted one stays as a row with neither flag until a listing settles it. `seq` orders
-- the writes: a listing read while an event arrived neither overwrites nor removes what the event
-- wrote. `updated`/`etag` are the membership's, when one wrote the row.
CREATE TABLE restrictions (
    user_id     TEXT NOT NULL,
    channel_id  TEXT NOT NULL,
    ban         INTEGER NOT NULL DEFAULT 0,
    mute        INTEGER NOT NULL DEFAULT 0,
    reason      TEXT,
    updated     TEXT,
    etag        TEXT,
    seq         INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, channel_id)
) WITHOUT ROWID;

-- The server's version of a user's mute list (the user object `PN_PRV.<user>.mute1`).
CREATE TABLE mute_lists (
    user_id  TEXT PRIMARY KEY NOT NULL,
    muted    TEXT NOT NULL DEFAULT '',
    updated  TEXT,
    etag     TEXT
);

-- The muted users as the app sees them: the server's list with the unsent mute and unmute ops
-- laid over it (read-your-writes). Queries that list messages leave these users' messages out.
CREATE TABLE muted_users (
    owner_id  TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    PRIMARY KEY (owner_id, user_id)
) WITHOUT ROWID;
CREATE INDEX muted_users_user ON muted_users(user_id);

-- Earlier versions stored hidden objects as ordinary ones: moderation memberships become
-- restrictions (the next listing keeps the current user's only), the rest leaves (the next sync
-- reads the mute list again). GLOB, not LIKE: the ids are compared case-sensitively, as in Swift.
INSERT OR REPLACE INTO restrictions (user_id, channel_id, ban, mute, reason, updated, etag)
    SELECT user_id, substr(channel_id, 28),
           coalesce(json_type(custom, '$.ban') = 'true', 0),
           coalesce(json_type(custom, '$.mute') = 'true', 0),
           json_extract(custom, '$.reason'), updated, etag
    FROM members
    WHERE channel_id GLOB 'PUBNUB_INTERNAL_MODERATION_?*' AND json_valid(coalesce(custom, '{}'));
DELETE FROM restrictions WHERE ban = 0 AND mute = 0;
DELETE FROM members
    WHERE (channel_id GLOB 'PUBNUB_INTERNAL_*' AND NOT channel_id GLOB 'PUBNUB_INTERNAL_THREAD_*')
       OR channel_id GLOB 'PN_PRV.*' OR user_id GLOB 'PN_PRV.*'
       OR channel_id IN (SELECT id FROM channels WHERE type = 'pn.prv')
       OR user_id IN (SELECT id FROM users WHERE type = 'pn.prv');
DELETE FROM message_actions
    WHERE (channel_id GLOB 'PUBNUB_INTERNAL_*' AND NOT channel_id GLOB 'PUBNUB_INTERNAL_THREAD_*')
       OR channel_id GLOB 'PN_PRV.*';
DELETE FROM messages
    WHERE (channel_id GLOB 'PUBNUB_INTERNAL_*' AND NOT channel_id GLOB 'PUBNUB_INTERNAL_THREAD_*')
       OR channel_id GLOB 'PN_PRV.*';
DELETE FROM drafts
    WHERE (channel_id GLOB 'PUBNUB_INTERNAL_*' AND NOT channel_id GLOB 'PUBNUB_INTERNAL_THREAD_*')
       OR channel_id GLOB 'PN_PRV.*';
DELETE FROM channels
    WHERE (id GLOB 'PUBNUB_INTERNAL_*' AND NOT id GLOB 'PUBNUB_INTERNAL_THREAD_*')
       OR id GLOB 'PN_PRV.*' OR type = 'pn.prv';
DELETE FROM users WHERE id GLOB 'PN_PRV.*' OR type = 'pn.prv';

-- pnreplicate schema, version 1.
-- Timetokens are INTEGER (100 ns units since 1970). App Context `updated` is kept twice: the exact
-- ISO-8601 text as the server wrote it (`updated`) and nanoseconds since 1970 (`updated_ns`) for
-- comparisons. JSON columns (custom, content, payload, ...) hold compact JSON text.

CREATE TABLE users (
    id           TEXT PRIMARY KEY NOT NULL,
    name         TEXT,
    type         TEXT NOT NULL DEFAULT 'default',
    status       TEXT,
    external_id  TEXT,
    profile_url  TEXT,
    email        TEXT,
    custom       TEXT,
    updated      TEXT,
    updated_ns   INTEGER,
    etag         TEXT
);
CREATE INDEX users_name ON users(name);

CREATE TABLE channels (
    id           TEXT PRIMARY KEY NOT NULL,
    name         TEXT,
    type         TEXT NOT NULL DEFAULT 'default',
    status       TEXT,
    description  TEXT,
    avatar_url   TEXT,
    custom       TEXT,
    updated      TEXT,
    updated_ns   INTEGER,
    etag         TEXT
);
CREATE INDEX channels_type_name ON channels(type DESC, name);

CREATE TABLE members (
    channel_id      TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    status          TEXT,
    type            TEXT,
    custom          TEXT,
    updated         TEXT,
    updated_ns      INTEGER,
    etag            TEXT,
    is_present      INTEGER,
    presence_state  TEXT,
    PRIMARY KEY (channel_id, user_id)
);
-- Memberships of a user (the primary key already serves members of a channel).
CREATE INDEX members_user ON members(user_id, channel_id);

CREATE TABLE messages (
    id            TEXT PRIMARY KEY NOT NULL,
    channel_id    TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    text          TEXT NOT NULL,
    content_type  TEXT,
    content       TEXT,
    custom        TEXT,
    created_at    TEXT NOT NULL,
    timetoken     INTEGER,
    delivery      TEXT NOT NULL DEFAULT 'pending' CHECK (delivery IN ('pending', 'sent', 'failed')),
    -- Local send order: increases with every message written locally; orders pending messages.
    local_seq     INTEGER NOT NULL
);
-- Channel history by timetoken, then pending messages in local send order.
CREATE INDEX messages_channel_timetoken ON messages(channel_id, timetoken);
CREATE INDEX messages_channel_pending ON messages(channel_id, local_seq) WHERE timetoken IS NULL;
CREATE INDEX messages_user ON messages(user_id, timetoken);
CREATE INDEX messages_local_seq ON messages(local_seq);

CREATE TABLE message_actions (
    id                 INTEGER PRIMARY KEY,
    channel_id         TEXT NOT NULL,
    message_timetoken  INTEGER,
    message_id         TEXT,
    type               TEXT NOT NULL,
    value              TEXT NOT NULL,
    user_id            TEXT NOT NULL,
    action_timetoken   INTEGER,
    CHECK (message_timetoken IS NOT NULL OR message_id IS NOT NULL)
);
-- PubNub allows one (user, type, value) per message.
CREATE UNIQUE INDEX message_actions_by_timetoken
    ON message_actions(channel_id, message_timetoken, type, value, user_id)
    WHERE message_timetoken IS NOT NULL;
CREATE UNIQUE INDEX message_actions_pending_parent
    ON message_actions(message_id, type, value, user_id)
    WHERE message_timetoken IS NULL;
CREATE INDEX message_actions_message_id ON message_actions(message_id);

-- Local writes waiting to be replayed to PubNub (filled by the outbox).
CREATE TABLE outbox (
    op_id             TEXT PRIMARY KEY NOT NULL,
    seq               INTEGER NOT NULL UNIQUE,
    kind              TEXT NOT NULL,
    lane              TEXT NOT NULL,
    payload           TEXT NOT NULL,
    base_etag         TEXT,
    base_updated      TEXT,
    base_snapshot     TEXT,
    depends_on        TEXT REFERENCES outbox(op_id) ON DELETE SET NULL,
    state             TEXT NOT NULL DEFAULT 'pending'
                      CHECK (state IN ('pending', 'inflight', 'ambiguous', 'conflict', 'dead')),
    attempts          INTEGER NOT NULL DEFAULT 0,
    next_attempt_at   INTEGER,
    last_error_class  TEXT,
    last_http_status  INTEGER,
    last_error        TEXT,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);
CREATE INDEX outbox_lane ON outbox(lane, seq);
CREATE INDEX outbox_ready ON outbox(state, next_attempt_at);

-- Where each pull (history of a channel, actions, object listings) has got to.
CREATE TABLE sync_checkpoints (
    scope        TEXT PRIMARY KEY NOT NULL,
    cursor       TEXT,
    range_start  INTEGER,
    range_end    INTEGER,
    updated_at   INTEGER NOT NULL
);

-- Every detected conflict, with what each side held and how it was resolved.
CREATE TABLE conflict_log (
    id           INTEGER PRIMARY KEY,
    entity_kind  TEXT NOT NULL,
    entity_id    TEXT NOT NULL,
    op_id        TEXT,
    base         TEXT,
    local        TEXT,
    remote       TEXT,
    result       TEXT,
    policy       TEXT NOT NULL,
    automatic    INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX conflict_log_entity ON conflict_log(entity_kind, entity_id);

-- Unsent message drafts, one per channel.
CREATE TABLE drafts (
    channel_id  TEXT PRIMARY KEY NOT NULL,
    text        TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);

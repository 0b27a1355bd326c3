-- Chat SDK conversations (docs/conversations.md). The events the Chat SDK publishes on a user's
-- own channel (named after the user's id) are notifications, not chat messages: a `mention` of the
-- user in a message, an `invite` to a channel. One row per event, keyed by the user's channel
-- and the event's timetoken; `kind` is 'mention' or 'invite'; `body` is the event as published.
-- A mention names its message (`channel_id`, `message_timetoken`, `parent_channel` in a thread);
-- an invitation names its channel (`channel_id`) and that channel's type (`channel_type`).
CREATE TABLE user_events (
    user_id            TEXT NOT NULL,
    timetoken          INTEGER NOT NULL,
    kind               TEXT NOT NULL CHECK (kind IN ('mention', 'invite')),
    publisher          TEXT,
    channel_id         TEXT NOT NULL,
    message_timetoken  INTEGER,
    parent_channel     TEXT,
    channel_type       TEXT,
    body               TEXT NOT NULL,
    PRIMARY KEY (user_id, timetoken)
) WITHOUT ROWID;
CREATE INDEX user_events_kind ON user_events(user_id, kind, timetoken);

-- Earlier versions stored such events that reached them live as raw messages of the user's
-- channel; the migration cannot tell which channel is the user's, so they stay until the first
-- pull of that channel re-reads them: each event stored then replaces its raw row
-- (`ServerMessages.apply`).

-- The thread channels a sync pulls are named by the `threadRootId` actions of stored messages.
CREATE INDEX message_actions_thread_root ON message_actions(value) WHERE type = 'threadRootId';

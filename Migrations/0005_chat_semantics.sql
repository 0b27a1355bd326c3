-- Chat semantics (docs/chat.md). Unread counts count a channel's messages after the read
-- position that another user wrote: (channel_id, timetoken, user_id) answers that from the index
-- alone, and replaces messages_channel_timetoken, its prefix. Soft deletions are few; their own
-- partial index finds those after a read position without reading reactions and edits.
DROP INDEX messages_channel_timetoken;
CREATE INDEX messages_channel_timetoken_user ON messages(channel_id, timetoken, user_id);
CREATE INDEX message_actions_deleted ON message_actions(channel_id, message_timetoken)
    WHERE type = 'deleted' AND value = 'deleted' AND message_timetoken IS NOT NULL;

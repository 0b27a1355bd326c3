-- Who may change what a message shows (docs/chat.md, "Who may edit and delete"). A message's own
-- author always may; so may each user listed here (moderators); the row '*' (never a valid user
-- id) lets anyone, which is the PubNub Chat SDK's rule. Read by the shown-text, soft-delete and
-- unread-count SQL (ReplicaStore/Query/ChatSemantics.swift).
CREATE TABLE message_editors (
    user_id  TEXT PRIMARY KEY NOT NULL
) WITHOUT ROWID;

-- What a message was published with besides its payload (docs/store.md, "Messages"): the publish
-- `meta` (JSON) and its `custom_message_type` (Chat SDK file messages and moderation events use
-- it), as the server gives them.
ALTER TABLE messages ADD COLUMN meta TEXT;
ALTER TABLE messages ADD COLUMN custom_message_type TEXT;

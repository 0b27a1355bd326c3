-- Who may change what a message shows (docs/chat.md, "Who may edit and delete"). A message's own
-- author always may; so may each user listed here (moderators); the row '*' (never a valid user
-- id) lets anyone, which is the PubNub Chat SDK's rule. Read by the shown-text, soft-delete and
-- unread-count SQL (ReplicaStore/Query/ChatSemantics.swift).
CREATE TABLE message_editors (
    user_id  TEXT PRIMARY KEY NOT NULL
) WITHOUT ROWID;

-- Message drafts: one per channel, and one per thread (the root message's timetoken; 0 for the
-- channel itself). `draft` is the MessageDraft's JSON ({text, mentions, quotedMessage});
-- `text` repeats its plain text for listing. Written in the transaction of each edit.
CREATE TABLE drafts (
    channel_id   TEXT NOT NULL,
    thread_root  INTEGER NOT NULL DEFAULT 0,
    text         TEXT NOT NULL,
    draft        TEXT NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (channel_id, thread_root)
);

-- The storage budget (docs/store.md, "Storage budget"). When the store evicts a channel's oldest
-- history, it records from which timetoken the channel's history is still complete: every message
-- of the channel with a timetoken at or after `complete_from` is stored; below it only the
-- messages eviction had to keep (pinned, unread, named by an op, thread roots). Scroll-back
-- (`loadOlder`) starts below `complete_from`, so the evicted messages come back and no gap is ever
-- taken as complete; search says from when a channel is complete. `evicted` counts the messages
-- evicted from the channel, `evicted_at` (ms) when it last happened.
--
-- Space goes back to the file system with incremental vacuum: a store created from this version
-- on has `auto_vacuum = INCREMENTAL` from its first page; an older store is switched once, by a
-- VACUUM, the first time a budget is enforced on it (a migration runs in a transaction, and
-- VACUUM cannot).
CREATE TABLE history_bounds (
    channel_id     TEXT PRIMARY KEY NOT NULL,
    complete_from  INTEGER NOT NULL,
    evicted        INTEGER NOT NULL DEFAULT 0,
    evicted_at     INTEGER NOT NULL
) WITHOUT ROWID;

-- Message search, second form (docs/search.md, "How the index is kept"). 0016 recomputed the
-- index rows inside every write transaction, which cost the write paths up to 43 % (ingest) and
-- 81 % (send --count); and each search read every match to rank or sort them (433 ms for a common
-- word in 1,000,000 messages). Here:
--
-- * The index is built after the commit, in batches, by the store's indexer (SearchIndex,
--   SearchIndexer): a write transaction only stores its rows. New messages need no note at all:
--   every message with a rowid above `search_state.indexed_through` is still to index. A message
--   already indexed whose shown text, timetoken or edits change is noted in `search_dirty` by the
--   triggers below (0016's, the message's own now also for its timetoken and send order). A store upgraded to this
--   version (or from before 0016) is indexed the same way, in batches after it opens.
-- * Each index row's rowid is a key in time order: the message's timetoken × 16 plus a slot (16
--   messages may share a timetoken in different channels), a pending message's above every sent
--   one (2^62 + its local_seq × 16 + a slot). `search_keys` maps a key to its message. A search
--   for the newest matches reads the index from its highest key and stops after one page; a
--   search by relevance ranks only the newest 500 matches (MessageSearch.rankedWindow).
-- * `scope` holds one token per message naming its channel (SearchIndex.scopeToken): a search in
--   some channels intersects that token's postings with the words' instead of reading every match.
--
-- If the largest rowid of `messages` is deleted, SQLite gives the next message the same rowid, so
-- the delete trigger lowers `indexed_through` to the largest rowid left (a rowid at or below it
-- would otherwise never be indexed).
DROP TRIGGER messages_search_insert;
DROP TRIGGER messages_search_update;
DROP TRIGGER messages_search_delete;
DROP TABLE message_search;
DROP TABLE search_backfill;
DELETE FROM search_dirty;

CREATE VIRTUAL TABLE message_search USING fts5(
    folded,
    scope,
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3'
);

CREATE TABLE search_keys (
    key            INTEGER PRIMARY KEY,
    message_rowid  INTEGER NOT NULL UNIQUE
);

CREATE TABLE search_state (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_through  INTEGER NOT NULL
);
INSERT INTO search_state (id, indexed_through) VALUES (1, 0);

-- Only a new text, timetoken or (pending) send order changes what a message shows or where it sorts.
CREATE TRIGGER messages_search_update AFTER UPDATE OF text, timetoken, local_seq ON messages
WHEN NEW.text IS NOT OLD.text OR NEW.timetoken IS NOT OLD.timetoken OR NEW.local_seq IS NOT OLD.local_seq BEGIN
    INSERT INTO search_dirty (message_rowid) SELECT NEW.rowid
    WHERE NEW.rowid <= (SELECT indexed_through FROM search_state)
      AND NOT EXISTS (SELECT 1 FROM search_dirty WHERE message_rowid = NEW.rowid);
END;

CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_search WHERE rowid = (SELECT key FROM search_keys WHERE message_rowid = OLD.rowid);
    DELETE FROM search_keys WHERE message_rowid = OLD.rowid;
    DELETE FROM search_dirty WHERE message_rowid = OLD.rowid;
    UPDATE search_state SET indexed_through = (SELECT coalesce(max(rowid), 0) FROM messages)
    WHERE OLD.rowid >= indexed_through AND indexed_through > (SELECT coalesce(max(rowid), 0) FROM messages);
END;

-- Message search (docs/search.md). `message_search` is an FTS5 index of each message's shown text
-- (its newest counted edit, else its published text: ChatSemantics owns that rule), folded by the
-- store (SearchFolding: runs of Chinese, Japanese, Korean, Thai, Lao, Khmer and Burmese letters
-- become overlapping pairs, so that words in languages without spaces are found; unicode61
-- then folds case and removes diacritics). Its rowid is the message's rowid.
--
-- The triggers below only note which messages changed (`search_dirty`, each at most once: a
-- trigger's `OR IGNORE` would give way to the conflict clause of the upsert that fires it, so
-- they insert only what is not there yet); the store recomputes
-- their index rows before each write transaction commits (SearchIndex.flush), so that every
-- write path (pull, live, send, edit, delete, restore, decrypt) keeps the index true without
-- naming it, and a write made by a tool that has none of the store's code (sqlite3) is indexed
-- by the next write of the store. A hard-deleted message leaves the index here, at once.
-- `'edited'` is ChatSDKFormat.editedType: a trigger cannot read a Swift constant.
CREATE VIRTUAL TABLE message_search USING fts5(
    folded,
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3'
);

CREATE TABLE search_dirty (
    message_rowid INTEGER PRIMARY KEY
);

-- The messages stored before this migration are indexed in batches after it (SearchIndex.backfill,
-- at open and after each sync), never in one long transaction at launch: rowids from next_rowid
-- to end_rowid are still to do.
CREATE TABLE search_backfill (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    next_rowid  INTEGER NOT NULL,
    end_rowid   INTEGER NOT NULL
);
INSERT INTO search_backfill (id, next_rowid, end_rowid) SELECT 1, coalesce(min(rowid), 1), coalesce(max(rowid), 0) FROM messages;

CREATE TRIGGER messages_search_insert AFTER INSERT ON messages BEGIN
    INSERT INTO search_dirty (message_rowid) SELECT NEW.rowid
    WHERE NOT EXISTS (SELECT 1 FROM search_dirty WHERE message_rowid = NEW.rowid);
END;

-- Only a new text changes what a message shows: a timetoken given at send moves its edits with
-- it (their rows are updated, and noted below), and a message never changes author. So the
-- outbox's drain, which gives sent messages their timetokens, costs the index nothing.
CREATE TRIGGER messages_search_update AFTER UPDATE OF text ON messages WHEN NEW.text IS NOT OLD.text BEGIN
    INSERT INTO search_dirty (message_rowid) SELECT NEW.rowid
    WHERE NOT EXISTS (SELECT 1 FROM search_dirty WHERE message_rowid = NEW.rowid);
END;

CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_search WHERE rowid = OLD.rowid;
    DELETE FROM search_dirty WHERE message_rowid = OLD.rowid;
END;

CREATE TRIGGER message_actions_search_insert AFTER INSERT ON message_actions WHEN NEW.type = 'edited' BEGIN
    INSERT INTO search_dirty (message_rowid)
        SELECT changed_rowid FROM (
            SELECT rowid AS changed_rowid FROM messages WHERE channel_id = NEW.channel_id AND timetoken = NEW.message_timetoken
            UNION SELECT rowid FROM messages WHERE id = NEW.message_id
        ) WHERE changed_rowid NOT IN (SELECT message_rowid FROM search_dirty);
END;

CREATE TRIGGER message_actions_search_delete AFTER DELETE ON message_actions WHEN OLD.type = 'edited' BEGIN
    INSERT INTO search_dirty (message_rowid)
        SELECT changed_rowid FROM (
            SELECT rowid AS changed_rowid FROM messages WHERE channel_id = OLD.channel_id AND timetoken = OLD.message_timetoken
            UNION SELECT rowid FROM messages WHERE id = OLD.message_id
        ) WHERE changed_rowid NOT IN (SELECT message_rowid FROM search_dirty);
END;

CREATE TRIGGER message_actions_search_update AFTER UPDATE ON message_actions WHEN OLD.type = 'edited' OR NEW.type = 'edited' BEGIN
    INSERT INTO search_dirty (message_rowid)
        SELECT changed_rowid FROM (
            SELECT rowid AS changed_rowid FROM messages WHERE channel_id = NEW.channel_id AND timetoken = NEW.message_timetoken
            UNION SELECT rowid FROM messages WHERE id = NEW.message_id
            UNION SELECT rowid FROM messages WHERE channel_id = OLD.channel_id AND timetoken = OLD.message_timetoken
            UNION SELECT rowid FROM messages WHERE id = OLD.message_id
        ) WHERE changed_rowid NOT IN (SELECT message_rowid FROM search_dirty);
END;

-- Who may edit whose messages (message_editors) decides which edit a message shows: a change
-- there recomputes every edited message.
CREATE TRIGGER message_editors_search_insert AFTER INSERT ON message_editors BEGIN
    INSERT INTO search_dirty (message_rowid)
        SELECT changed_rowid FROM (
            SELECT msg.rowid AS changed_rowid FROM message_actions a JOIN messages msg ON msg.channel_id = a.channel_id AND msg.timetoken = a.message_timetoken
            WHERE a.type = 'edited'
            UNION SELECT msg.rowid FROM message_actions a JOIN messages msg ON msg.id = a.message_id WHERE a.type = 'edited'
        ) WHERE changed_rowid NOT IN (SELECT message_rowid FROM search_dirty);
END;

CREATE TRIGGER message_editors_search_delete AFTER DELETE ON message_editors BEGIN
    INSERT INTO search_dirty (message_rowid)
        SELECT changed_rowid FROM (
            SELECT msg.rowid AS changed_rowid FROM message_actions a JOIN messages msg ON msg.channel_id = a.channel_id AND msg.timetoken = a.message_timetoken
            WHERE a.type = 'edited'
            UNION SELECT msg.rowid FROM message_actions a JOIN messages msg ON msg.id = a.message_id WHERE a.type = 'edited'
        ) WHERE changed_rowid NOT IN (SELECT message_rowid FROM search_dirty);
END;

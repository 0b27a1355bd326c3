-- Which object backend a store's users, channels and memberships come from: App Context or
-- DataSync (docs/datasync.md, "Binding a store to a backend"). A replica opened with the other
-- backend is refused (StoreError.objectBackendMismatch): the two keep the same chat objects in
-- different shapes, ids and versions, and moving an App Context store to DataSync is not promised.
CREATE TABLE replica_settings (
    key    TEXT PRIMARY KEY NOT NULL,
    value  TEXT NOT NULL
) WITHOUT ROWID;

-- A store that already holds a server's object came from App Context, the only backend before.
INSERT INTO replica_settings (key, value)
SELECT 'objects.backend', 'app-context'
WHERE EXISTS (SELECT 1 FROM users WHERE etag IS NOT NULL)
   OR EXISTS (SELECT 1 FROM channels WHERE etag IS NOT NULL)
   OR EXISTS (SELECT 1 FROM members WHERE etag IS NOT NULL);

-- An app's own DataSync classes kept offline (docs/app-data.md): records of the entity and
-- relationship classes the app declares (`ReplicaConfiguration.appData`), whatever the class.
--
-- `app_classes` holds each declared class as the store last bound it: its declaration (JSON) and
-- which slot column holds each declared property (`slots`, JSON `{"question":0,"closed":1}`). A
-- changed declaration is bound at the next start (`AppDataCatalog`): a kept property keeps its
-- slot, a new or moved one takes a free slot and the class's rows are filled again, an undeclared
-- class's rows are dropped.
CREATE TABLE app_classes (
    name         TEXT PRIMARY KEY NOT NULL,
    declaration  TEXT NOT NULL,
    slots        TEXT NOT NULL
) WITHOUT ROWID;

-- One record of a declared class: `resource` is `entities` or `relationships` (the two have
-- their own ids on the server), the system fields as the server sent them (`updated_ns` and
-- `expires_ns` the same instants in nanoseconds, for the version rule and the expiry sweep),
-- `payload` compact JSON with sorted keys, `end_a`/`end_b` a relationship's two entities.
-- `p0`..`p5` hold the declared properties' values, typed once when the row is written (a string
-- or a `YYYY-MM-DD` date as text, a number as a number, a boolean as 0/1, a date-time as
-- nanoseconds; NULL when the record leaves the property out or holds another kind), with no type
-- affinity so that SQLite keeps what it is given. Which property a slot holds is the class's
-- (`app_classes.slots`), so each slot's index starts with the class: a query by property is one
-- index search, `WHERE class_name = ? AND p1 = ?` (or a range of it, or its order).
CREATE TABLE app_records (
    resource       TEXT NOT NULL,
    id             TEXT NOT NULL,
    class_name     TEXT NOT NULL,
    class_version  INTEGER NOT NULL,
    status         TEXT,
    payload        TEXT NOT NULL,
    etag           TEXT,
    created_at     TEXT,
    updated_at     TEXT,
    updated_ns     INTEGER,
    expires_at     TEXT,
    expires_ns     INTEGER,
    end_a          TEXT,
    end_b          TEXT,
    p0, p1, p2, p3, p4, p5,
    UNIQUE (resource, id)
);
CREATE INDEX app_records_p0 ON app_records (class_name, p0);
CREATE INDEX app_records_p1 ON app_records (class_name, p1);
CREATE INDEX app_records_p2 ON app_records (class_name, p2);
CREATE INDEX app_records_p3 ON app_records (class_name, p3);
CREATE INDEX app_records_p4 ON app_records (class_name, p4);
CREATE INDEX app_records_p5 ON app_records (class_name, p5);
CREATE INDEX app_records_a ON app_records (class_name, end_a);
CREATE INDEX app_records_b ON app_records (class_name, end_b);
CREATE INDEX app_records_changed ON app_records (class_name, updated_ns);
CREATE INDEX app_records_expiry ON app_records (expires_ns) WHERE expires_ns IS NOT NULL;

-- A record this replica learnt was deleted (an event or its own delete), so that an older copy
-- arriving later (a page fetched before the delete, a second relationship event) does not bring it
-- back. A record written later than the deletion (`updated_ns > deleted_ns`) is a new one and is
-- stored. Cleared for the records a full listing still lists.
CREATE TABLE app_tombstones (
    resource    TEXT NOT NULL,
    id          TEXT NOT NULL,
    class_name  TEXT NOT NULL,
    deleted_ns  INTEGER NOT NULL,
    PRIMARY KEY (resource, id)
) WITHOUT ROWID;

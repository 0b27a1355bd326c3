-- pnreplicate schema, version 2: what the outbox drain engine needs beyond version 1's table.
-- Times are milliseconds since 1970 (UTC) from the replicator's injected clock.

-- The entity an op changes ("user:<id>", "channel:<id>", "member:<channel>/<user>",
-- "reaction:<message id>/<type>/<value>", "message:<id>"): coalescing finds earlier ops by it.
ALTER TABLE outbox ADD COLUMN target TEXT NOT NULL DEFAULT '';
-- When the op was first handed to the transport: a publish probe searches history from shortly before it.
ALTER TABLE outbox ADD COLUMN first_attempt_at INTEGER;
-- 5xx answers so far; after the configured limit the op becomes a dead letter.
ALTER TABLE outbox ADD COLUMN server_failures INTEGER NOT NULL DEFAULT 0;
-- JSON array of notes on what coalescing merged into this op (shown by `pnreplicate --dry-run`).
ALTER TABLE outbox ADD COLUMN coalesced TEXT;

CREATE INDEX outbox_target ON outbox(target, seq);
CREATE INDEX outbox_depends_on ON outbox(depends_on) WHERE depends_on IS NOT NULL;

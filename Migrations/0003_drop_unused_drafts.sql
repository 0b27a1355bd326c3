-- The `drafts` table of 0001 was never written or read; message drafts get their own schema
-- when they are built (with elements, quotes and threads), so the placeholder goes.
DROP TABLE IF EXISTS drafts;

-- The ops that wait on the keyset's configuration (error class `configuration`: DataSync not
-- enabled on the keyset, Access Manager off, no credential; docs/datasync.md, "Errors"), found
-- without reading every op: ReplicaStatus.configurationError reads the newest one's failure each
-- time the outbox is counted. Partial, so it costs nothing for the ops that never meet one.
CREATE INDEX outbox_configuration ON outbox(updated_at) WHERE last_error_class = 'configuration';

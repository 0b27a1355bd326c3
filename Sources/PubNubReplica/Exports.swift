// `import PubNubReplica` is all an app writes: the entities, the queries, the outbox's receipts
// and the wire configuration come with it. GRDB does not: no public API of these modules needs
// the app to import it.
@_exported import PubNubWire
@_exported import ReplicaModel
@_exported import ReplicaStore
@_exported import Replicator

import GRDB
import ReplicaModel
import ReplicaStore

/// A raw connection to a store's file, as the benchmarks measure their limits: the store creates
/// (or migrates) the schema, and the raw connection sees the same file with the store's default
/// durability (WAL, `synchronous=NORMAL`). The benchmarks write their baselines and fixtures
/// through it, never through the store's own connection (a `package` member an app cannot reach).
///
/// ```swift
/// let raw = try rawConnection(toStoreAt: path)
/// try raw.write { db in try db.execute(sql: "INSERT INTO users (id) VALUES ('me')") }
/// ```
public func rawConnection(toStoreAt path: String) throws -> DatabaseQueue {
    _ = try ChatStore<DefaultChatCustom>.open(at: path)
    var configuration = Configuration()
    configuration.prepareDatabase { try $0.execute(sql: "PRAGMA synchronous = NORMAL") }
    return try DatabaseQueue(path: path, configuration: configuration)
}

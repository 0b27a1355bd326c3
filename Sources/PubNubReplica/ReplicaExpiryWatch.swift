import Foundation
import Logging
import ReplicaModel
import ReplicaStore

/// The expiry warning of a replica: reads the followed objects that expire within
/// ``ReplicaConfiguration/expiryWarning`` into ``ReplicaStatus/expiring``, and logs each one once
/// per `expiresAt` (a notice: the status is how an app learns of it; the CLI prints its own line).
///
/// Apart from ``Replica`` so that the façade keeps to its public calls; the replica holds one and
/// calls ``refresh(_:)`` when the store may have learned of objects: after a sync, when live sync
/// is live, after a gap fill.
actor ReplicaExpiryWatch {
    /// The expiring objects already logged: each once per `expiresAt`.
    private var logged = Set<ExpiringObject>()
    private let logger: Logger

    init(_ configuration: ReplicaConfiguration) {
        var logger = Logger(label: configuration.logLabel + ".expiry")
        logger.logLevel = configuration.storeOptions.logger.logLevel
        self.logger = logger
    }

    /// Logs each of `objects` not logged before.
    private func log(_ objects: [ExpiringObject]) {
        for object in objects where logged.insert(object).inserted {
            logger.notice("a followed object expires soon", metadata: ["object": "\(object)"])
        }
    }

    /// Reads `replica`'s ``Replica/expiryWarnings()`` into its status and logs the new ones.
    /// Nothing when no warning is configured or the store cannot be read (suspended, signed out).
    static func refresh<Custom: ChatCustomData>(_ replica: Replica<Custom>) async {
        guard replica.configuration.expiryWarning != nil, let expiring = try? await replica.expiryWarnings() else { return }
        await replica.expiryWatch.log(expiring)
        replica.hub.update { $0.expiring = expiring }
    }

    /// The followed objects that expire within the configured warning from the clock's now,
    /// read synchronously from `store` (a replica's first status); none on App Context.
    static func expiring<Custom: ChatCustomData>(in store: ChatStore<Custom>, _ configuration: ReplicaConfiguration) throws -> [ExpiringObject] {
        guard let warning = configuration.expiryWarning else { return [] }
        return try store.fetchNow(ChatQueries<Custom>().expiringObjects(
            followedBy: configuration.userId, before: configuration.clock.now.addingTimeInterval(warning)))
    }
}

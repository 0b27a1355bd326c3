import Foundation
import GRDB
import ReplicaModel

// The devices this store registered for mobile push (`push_devices`, migration 0015), read when
// the user signs out so that each device's registrations can be removed (docs/ios.md).
extension StoreTransaction {
    /// Records what a queued `push` op does to the device it names: adding channels records the
    /// device, removing the device forgets it, removing some channels changes nothing (the device
    /// may still have others). Called in the op's own transaction.
    package func record(push registration: PushRegistration, now: Date) throws {
        let key: [any DatabaseValueConvertible] = [
            registration.token, registration.service, registration.topic ?? "", registration.environment ?? "",
        ]
        switch registration.change {
        case .add:
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO push_devices (token, service, topic, environment, registered_at)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: StatementArguments(key + [ISOTimestamp(date: now).description]))
        case .removeDevice:
            try db.execute(
                sql: "DELETE FROM push_devices WHERE token = ? AND service = ? AND topic = ? AND environment = ?",
                arguments: StatementArguments(key))
        case .remove:
            break
        }
    }
}

extension ChatQueries {
    /// Every device this store registered for mobile push and has not removed since, each as the
    /// registration that removes it (``PushRegistration/Change/removeDevice``), oldest first.
    /// Signing out sends them, so that the next user of the device gets none of this user's
    /// notifications.
    ///
    /// ```swift
    /// let devices = try await store.fetch(store.queries.pushDevices())
    /// ```
    package func pushDevices() -> StoreQuery<[PushRegistration]> {
        StoreQuery { db in
            try Row.fetchAll(db, sql: "SELECT token, service, topic, environment FROM push_devices ORDER BY registered_at, token")
                .map { row in
                    let topic: String = row[2], environment: String = row[3]
                    return PushRegistration(
                        token: row[0], service: row[1], topic: topic.isEmpty ? nil : topic,
                        environment: environment.isEmpty ? nil : environment, change: .removeDevice)
                }
        }
    }
}

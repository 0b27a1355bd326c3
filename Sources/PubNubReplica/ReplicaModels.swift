import Foundation
import Observation
import ReplicaStore

/// The latest ``ReplicaStatus`` of a replica, for a SwiftUI view to bind to (Observation; no GRDB).
///
/// ```swift
/// struct StatusBar: View {
///     let status: ReplicaStatusModel            // ReplicaStatusModel(replica), made once
///     var body: some View {
///         Text(status.status.isOffline ? "Offline, \(status.status.pending) waiting" : "Up to date")
///     }
/// }
/// ```
///
/// It follows ``Replica/statuses()`` on the main actor until it is released.
@MainActor
@Observable
public final class ReplicaStatusModel {
    /// The replica's status, updated on the main actor at each change.
    public private(set) var status = ReplicaStatus()
    @ObservationIgnored private var task: Task<Void, Never>?

    /// Follows `replica`'s status from now on.
    public init<Custom: ChatCustomData>(_ replica: Replica<Custom>) {
        let statuses = replica.statuses()
        task = Task { [weak self] in
            for await status in statuses {
                guard let self else { return }
                self.status = status
            }
        }
    }

    isolated deinit { task?.cancel() }
}

/// The live value of one query of a replica, for a SwiftUI view (Observation; no GRDB): the
/// messages of a channel, its members, unread counts.
///
/// ```swift
/// @State var messages = ObservedQuery(replica, replica.queries.messages(inChannel: "general"), keepingHot: "general")
/// ...
/// List(messages.value ?? []) { Text($0.text) }
/// ```
///
/// It follows ``Replica/observe(_:)`` on the main actor (across suspend and resume) until released;
/// with `keepingHot`, ``Replica/observe(_:keepingHot:)``: the channel the screen shows is kept
/// complete (its reactions and members too) while the view holds it.
@MainActor
@Observable
public final class ObservedQuery<Value: Sendable & Equatable> {
    /// The query's value: nil until the first read.
    public private(set) var value: Value?
    /// The error that ended the observation, if one did.
    public private(set) var error: (any Error)?
    @ObservationIgnored private var task: Task<Void, Never>?

    /// Observes `query` on `replica`'s store, keeping `channel` hot meanwhile when given
    /// (``ReplicaLive/markHot(_:)``).
    public init<Custom: ChatCustomData>(_ replica: Replica<Custom>, _ query: StoreQuery<Value>, keepingHot channel: String? = nil) {
        let values = channel.map { replica.observe(query, keepingHot: $0) } ?? replica.observe(query)
        task = Task { [weak self] in
            do {
                for try await value in values {
                    guard let self else { return }
                    self.value = value
                }
            } catch {
                self?.error = error
            }
        }
    }

    isolated deinit { task?.cancel() }
}

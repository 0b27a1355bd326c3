import Foundation
import ReplicaStore
@testable import Replicator

/// Drives single op transitions through the outbox's state machine, for tests that need an op in
/// a given state (in flight, ambiguous, failed) without a network exchange.
extension Outbox {
    /// Marks the op in flight, as an attempt does before sending.
    @discardableResult
    func markInflightForTest(_ id: String, now: Date) async throws -> OutboxEntry? {
        try await commit { try $0.markInflight(id, now: now) }
    }

    /// Records a failed attempt, as the drain does after an answer.
    func recordFailureForTest(
        _ id: String, state: OutboxState, retryAt: Date?, failure: OutboxFailure, serverFailure: Bool, now: Date
    ) async throws {
        try await commit {
            try $0.recordFailure(id, state: state, retryAt: retryAt, failure: failure, serverFailure: serverFailure, now: now)
        }
    }
}

import Foundation
import PubNubWire
import ReplicaStore

/// What a failed attempt means for its op: each error class is one state transition.
enum FailureDecision: Sendable, Hashable {
    /// The failure proves the op's effect is in place (409 on a reaction add, nothing to remove, ...).
    case done
    /// Try again later, in `state`, waiting at least `minimumWait` (Retry-After).
    case retry(state: OutboxState, minimumWait: TimeInterval, failure: OutboxFailure, serverFailure: Bool)
    /// A dead letter.
    case dead(OutboxFailure)
    /// A 412: the edit's base is stale.
    case conflict(OutboxFailure)

    /// Classifies a failed attempt of an op of `kind` that already had `serverFailures` 5xx answers.
    static func classify(_ error: WireError, kind: OutboxKind, serverFailures: Int, policy: RetryPolicy) -> FailureDecision {
        switch error {
        case .transport(.notSent(let reason)):
            return .retry(
                state: .pending, minimumWait: 0, failure: OutboxFailure(errorClass: .notSent, message: reason),
                serverFailure: false)
        case .transport(.outcomeUnknown(let reason)):
            return .retry(
                state: .ambiguous, minimumWait: 0, failure: OutboxFailure(errorClass: .outcomeUnknown, message: reason),
                serverFailure: false)
        case .decoding(_, let status, let message):
            // A 2xx we cannot read: the server applied something.
            return .retry(
                state: .ambiguous, minimumWait: 0,
                failure: OutboxFailure(errorClass: .outcomeUnknown, httpStatus: status, message: "unreadable answer: \(message)"),
                serverFailure: false)
        case .invalidArgument(let message), .invalidConfiguration(let message):
            return .dead(OutboxFailure(errorClass: .other, message: message))
        case .service(let service):
            return classify(service, kind: kind, serverFailures: serverFailures, policy: policy)
        }
    }

    static func classify(_ error: ServiceError, kind: OutboxKind, serverFailures: Int, policy: RetryPolicy)
        -> FailureDecision
    {
        let status = error.status
        switch (status, kind) {
        case (409, .addReaction):
            return .done
        case (400, .removeReaction) where error.message.localizedCaseInsensitiveContains("no matching"):
            return .done
        case (404, .removeUser), (404, .removeChannel):
            return .done
        default:
            break
        }
        switch status {
        case 412:
            return .conflict(OutboxFailure(errorClass: .conflict, httpStatus: status, message: error.message))
        case 429:
            return .retry(
                state: .pending, minimumWait: error.retryAfter ?? 0,
                failure: OutboxFailure(errorClass: .rateLimited, httpStatus: status, message: error.message),
                serverFailure: false)
        case 408:
            return .retry(
                state: .ambiguous, minimumWait: 0,
                failure: OutboxFailure(errorClass: .outcomeUnknown, httpStatus: status, message: error.message),
                serverFailure: false)
        case 500...599:
            let failure = OutboxFailure(errorClass: .server, httpStatus: status, message: error.message)
            if serverFailures + 1 >= policy.maxServerFailures { return .dead(failure) }
            // A publish has no idempotency key: after a 5xx (a gateway may have forwarded it) it is
            // probed before it is sent again. Every other op is safe to resend.
            return .retry(state: kind == .send ? .ambiguous : .pending, minimumWait: 0, failure: failure, serverFailure: true)
        default:
            return .dead(OutboxFailure(errorClass: status < 500 && status >= 400 ? .rejected : .other, httpStatus: status,
                                       message: error.message))
        }
    }
}

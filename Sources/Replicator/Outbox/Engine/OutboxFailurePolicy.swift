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
    /// Waits for a new Access Manager token (in `state`: an ambiguous op stays ambiguous).
    case waitForToken(state: OutboxState, failure: OutboxFailure)

    /// Classifies a failed attempt of an op of `kind` that already had `serverFailures` 5xx answers
    /// (the `limit`-th makes it a dead letter: ``OutboxOptions/maxServerFailures``).
    ///
    /// The op-specific rules come first (`opRule`, then 412); everything else follows
    /// ``PubNubWire/WireError/retryability``, the classification the reconciler's reads share.
    ///
    /// Access Manager (`docs/access.md`): a denial waits for a new token, unless the op already
    /// waited for one under another token (`waitedUnder`: the fingerprint its last
    /// ``ReplicaStore/OutboxErrorClass/accessDenied`` failure recorded, nil when it never waited)
    /// and is now refused by the server or not granted under this one: then it is a dead letter
    /// naming what it needed. Refused again under the same token (a relaunch with the revoked
    /// token), it waits again. A denial that sent nothing because the token expired or every
    /// request waits never makes a dead letter.
    static func classify(
        _ error: WireError, kind: OutboxKind, serverFailures: Int, limit: Int, waitedUnder: String? = nil,
        ambiguous: Bool = false, enqueuedAt: Date? = nil
    ) -> FailureDecision {
        if case .accessDenied(let denial) = error {
            let needed = denial.missing.map(\.description).joined(separator: ", ")
            let waitedForToken = waitedUnder.map { $0 != denial.token } ?? false
            // The token does not grant the op, and it arrived after the op was queued: a token was
            // delivered since, and it still does not allow it.
            var arrivedSince = false
            if let since = denial.tokenSince, let enqueuedAt { arrivedSince = since > enqueuedAt }
            func failure(_ message: String, status: Int? = nil) -> OutboxFailure {
                OutboxFailure(errorClass: .accessDenied, httpStatus: status, message: message, token: denial.token)
            }
            switch denial.reason {
            case .refused(let service) where waitedForToken:
                return .dead(failure(
                    "refused by Access Manager under a new token: needs \(needed) (\(service.message))", status: service.status))
            case .notGranted where waitedForToken || arrivedSince:
                return .dead(failure("the new token does not grant \(needed)"))
            case .refused(let service):
                return .waitForToken(
                    state: ambiguous ? .ambiguous : .pending,
                    failure: failure("waiting for a token: Access Manager refused (\(service.message))", status: service.status))
            case .notGranted:
                return .waitForToken(
                    state: ambiguous ? .ambiguous : .pending, failure: failure("waiting for a token: the token does not grant \(needed)"))
            case .expired, .waiting, .noToken:
                // Nothing was sent: the op keeps the token it waited under, if any (an expiry says
                // nothing about whether the op is allowed).
                var record = failure("\(denial)")
                if let waitedUnder { record.token = waitedUnder }
                return .waitForToken(state: ambiguous ? .ambiguous : .pending, failure: record)
            }
        }
        if case .service(let service) = error {
            if let decision = opRule(service, kind: kind) { return decision }
            if kind == .setAppRecord, service.status == 409 {
                // An app record's create met a record: its id exists (another device's create, or
                // this one's whose answer was lost and was not probed) → the conflict policies
                // compare the two; a relationship class's cardinality (one end is linked
                // already) cannot be resolved by resending → a dead letter that says so.
                if service.codes.contains(DataSyncErrors.cardinality) { return .dead(failure(error, .rejected)) }
                return .conflict(failure(error, .conflict))
            }
            // A stale If-Match (412), or a failed JSON Patch `test` (DataSync's 409 DS-0302).
            if service.status == 412 || service.reason == .preconditionFailed { return .conflict(failure(error, .conflict)) }
            switch service.reason {
            case .notConfigured:
                // DataSync refuses every call until the keyset or the configuration changes
                // (DS-0201, DS-0203, DS-0006): wait, never a dead letter for this alone.
                return .retry(
                    state: ambiguous ? .ambiguous : .pending, minimumWait: configurationRetry, failure: failure(error, .configuration),
                    serverFailure: false)
            case .outsideProjection:
                // DS-0202: the token's projection excludes a field the write touches; resending cannot help.
                return .dead(failure(error, .rejected))
            default:
                break
            }
        }
        switch error.retryability {
        case .notSent:
            return .retry(state: .pending, minimumWait: 0, failure: failure(error, .notSent), serverFailure: false)
        case .outcomeUnknown:
            // A timeout, a lost connection, a 408 or a 2xx we cannot read: the server may have applied it.
            return .retry(state: .ambiguous, minimumWait: 0, failure: failure(error, .outcomeUnknown), serverFailure: false)
        case .rateLimited(let retryAfter):
            return .retry(
                state: .pending, minimumWait: retryAfter ?? 0, failure: failure(error, .rateLimited), serverFailure: false)
        case .waitForToken:
            // Handled above (only an access denial waits for a token).
            return .waitForToken(state: ambiguous ? .ambiguous : .pending, failure: failure(error, .accessDenied))
        case .serverFailure:
            let record = failure(error, .server)
            if serverFailures + 1 >= limit { return .dead(record) }
            // A publish has no idempotency key: after a 5xx (a gateway may have forwarded it) it is
            // probed before it is sent again. Every other op is safe to resend.
            return .retry(state: kind == .send ? .ambiguous : .pending, minimumWait: 0, failure: record, serverFailure: true)
        case .permanent:
            if case .service(let service) = error, (400..<500).contains(service.status) {
                return .dead(failure(error, .rejected))
            }
            return .dead(failure(error, .other))
        }
    }

    /// Classifies a failed upload step of a send with files (`docs/files.md`): nothing was
    /// published yet, so no outcome makes the send ambiguous; an upload form that storage refused
    /// (403: expired or denied) is redone at once under a new id.
    static func classifyFileStep(_ error: WireError, serverFailures: Int, limit: Int, waitedUnder: String?) -> FailureDecision {
        if case .service(let service) = error, service.family == .storage, service.status == 403 {
            return .retry(state: .pending, minimumWait: 0, failure: failure(error, .rejected), serverFailure: false)
        }
        switch classify(error, kind: .send, serverFailures: serverFailures, limit: limit, waitedUnder: waitedUnder) {
        case .retry(.ambiguous, let wait, let record, let serverFailure):
            return .retry(state: .pending, minimumWait: wait, failure: record, serverFailure: serverFailure)
        case let other:
            return other
        }
    }

    /// Classifies a failed attempt whose answer was an error status (see the ``PubNubWire/WireError`` overload).
    static func classify(_ error: ServiceError, kind: OutboxKind, serverFailures: Int, limit: Int)
        -> FailureDecision
    {
        classify(.service(error), kind: kind, serverFailures: serverFailures, limit: limit)
    }

    /// How long an op refused by the keyset's configuration waits before it is tried again.
    static let configurationRetry: TimeInterval = 300

    /// The answers that prove an op's effect is in place although the request failed.
    private static func opRule(_ error: ServiceError, kind: OutboxKind) -> FailureDecision? {
        switch kind.traits.doneAnswer {
        case .conflict409?:
            return error.status == 409 ? .done : nil
        case .noMatching400?:
            return error.status == 400 && error.message.localizedCaseInsensitiveContains("no matching") ? .done : nil
        case .notFound404?:
            // Already gone: a resend whose first answer was lost, or another writer's removal.
            return error.status == 404 ? .done : nil
        case nil:
            return nil
        }
    }

    /// The failure record of `error` under `errorClass`: the HTTP status when there was an
    /// answer, and the server's message or the transport's reason.
    private static func failure(_ error: WireError, _ errorClass: OutboxErrorClass) -> OutboxFailure {
        switch error {
        case .transport(.notSent(let reason)), .transport(.outcomeUnknown(let reason)):
            OutboxFailure(errorClass: errorClass, message: reason)
        case .decoding(_, let status, let message):
            OutboxFailure(errorClass: errorClass, httpStatus: status, message: "unreadable answer: \(message)")
        case .service(let service):
            // DataSync's codes (`DS-0201`) are what its documentation and an app's support look up.
            OutboxFailure(
                errorClass: errorClass, httpStatus: service.status,
                message: service.codes.isEmpty ? service.message : "\(service.message) (\(service.codes.joined(separator: ", ")))")
        case .invalidArgument(let message), .invalidConfiguration(let message):
            OutboxFailure(errorClass: errorClass, message: message)
        case .payloadTooLarge, .accessDenied:
            OutboxFailure(errorClass: errorClass, message: error.description)
        }
    }
}

import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Access Manager: the token requests carry, replaced at runtime, and why it was refused.
///
/// ```swift
/// try replica.access.setToken(newTokenFromMyServer)
/// ```
///
/// Reached through ``Replica/access``: a value made per access, holding only the replica.
public struct ReplicaAccess<Custom: ChatCustomData>: Sendable {
    /// The replica these calls go through.
    let replica: Replica<Custom>

    /// Replaces the Access Manager token at runtime: the next request of the outbox, the pulls and
    /// live sync carries it, without a restart. Ops that waited for a token go at once
    /// (`docs/access.md`).
    ///
    /// ```swift
    /// try replica.setToken(newTokenFromMyServer)
    /// ```
    ///
    /// - Throws: `AccessTokenError.otherUser` when the
    ///   token's authorized user is not ``Replica/userId`` (nothing changes then).
    public func setToken(_ token: String?) throws(AccessTokenError) {
        try replica.client.access.setToken(token)
    }

    /// The current token, parsed (its TTL, authorized user and grants), or nil when there is none
    /// or it is a legacy auth key. Its text is never shown by `description`.
    public var token: AccessToken? { replica.client.access.parsedToken }

    /// What Access Manager said when it last refused the current token (its 403 message), while
    /// requests wait for a new one (``ReplicaStatus/waitingForToken`` is `.refused`); nil
    /// otherwise. For telling the user why nothing goes: the token's text is never in it.
    ///
    /// ```swift
    /// if await replica.status.waitingForToken == .refused { show(replica.tokenRefusal ?? "access refused") }
    /// ```
    public var refusal: String? { replica.client.access.refusalMessage }
}

extension Replica {
    /// Access Manager: the token requests carry, replaced at runtime, and why it was refused.
    public nonisolated var access: ReplicaAccess<Custom> { ReplicaAccess(replica: self) }
}

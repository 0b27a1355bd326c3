import Foundation
import Logging
import PubNubWire
import ReplicaModel
import Replicator

extension Replica {
    /// Replaces the Access Manager token at runtime: the next request of the outbox, the pulls and
    /// live sync carries it, without a restart. Ops that waited for a token go at once
    /// (`docs/access.md`).
    ///
    /// ```swift
    /// try replica.setToken(newTokenFromMyServer)
    /// ```
    ///
    /// - Throws: `AccessTokenError.otherUser` when the
    ///   token's authorized user is not ``userId`` (nothing changes then).
    public nonisolated func setToken(_ token: String?) throws(AccessTokenError) {
        try client.access.setToken(token)
    }

    /// The current token, parsed (its TTL, authorized user and grants), or nil when there is none
    /// or it is a legacy auth key. Its text is never shown by `description`.
    public nonisolated var accessToken: AccessToken? { client.access.parsedToken }

    /// What Access Manager said when it last refused the current token (its 403 message), while
    /// requests wait for a new one (``ReplicaStatus/waitingForToken`` is `.refused`); nil
    /// otherwise. For telling the user why nothing goes: the token's text is never in it.
    ///
    /// ```swift
    /// if await replica.status.waitingForToken == .refused { show(replica.tokenRefusal ?? "access refused") }
    /// ```
    public nonisolated var tokenRefusal: String? { client.access.refusalMessage }

    /// While started: follows the client's token into the status, and runs the token provider
    /// (``ReplicaConfiguration/tokenProvider``) when there is one.
    func launchAccess() {
        let access = client.access
        let provider = configuration.tokenProvider.map { provider in
            var logger = Logger(label: configuration.logLabel + ".access")
            logger.logLevel = configuration.storeOptions.logger.logLevel
            return TokenRefresher(
                access: access, provider: provider, clock: clock, retry: configuration.outbox.retry,
                random: configuration.random(0xACCE55), logger: logger)
        }
        let events = access.events()
        accessTask = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                if let provider { group.addTask { await provider.run() } }
                group.addTask {
                    await self?.tokenChanged(access, provider: provider)
                    for await _ in events { await self?.tokenChanged(access, provider: provider) }
                }
            }
        }
    }

    private func tokenChanged(_ access: AccessControl, provider: TokenRefresher?) async {
        let error = await provider?.lastError
        update {
            $0.waitingForToken = access.waitingFor
            $0.tokenExpires = access.parsedToken?.expires
            $0.tokenError = error
        }
    }
}

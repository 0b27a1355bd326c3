import CoreMetrics
import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// Everything a ``Replica`` needs, set once: PubNub's keys and user (named as PubNub's SDKs name
/// them), where the store lives, and the policies of the outbox, the reconciler and live sync.
///
/// ```swift
/// var configuration = ReplicaConfiguration(
///     publishKey: "pub-c-…", subscribeKey: "sub-c-…", userId: "alice",
///     store: .file(appGroupURL.appendingPathComponent("chat.sqlite").path))
/// configuration.live.channels = ["general"]
/// configuration.reconciler.conflicts.channel = .fieldMerge(tie: .lastWriter)
/// let replica = try Replica<DefaultChatCustom>(configuration)
/// ```
///
/// Tests swap only the parts that reach the outside: ``transport`` (the simulator's in-process
/// transport), ``clock`` (a virtual clock) and ``seed``.
public struct ReplicaConfiguration: Sendable {
    /// Where the store lives.
    public enum StoreLocation: Sendable, Hashable {
        /// A SQLite file (created and migrated when missing), with its `-wal`, `-shm` and `.lock`
        /// companions beside it. On iOS, see `docs/ios.md` for App Groups and file protection.
        case file(String)
        /// In memory only: gone with the process (tests, previews). ``Replica/suspend()`` keeps it open.
        case inMemory
    }

    /// PubNub's publish key.
    public var publishKey: String
    /// PubNub's subscribe key.
    public var subscribeKey: String
    /// The user of this device (1-92 UTF-8 bytes), as PubNub's `userId`.
    public var userId: String
    /// The Access Manager token (or legacy auth key) sent with every request, if the keyset needs
    /// one. Replace it at runtime with ``ReplicaAccess/setToken(_:)``, or let ``tokenProvider`` fetch
    /// new ones (`docs/access.md`). A v3 token for another user is refused at ``Replica/init(_:)``.
    public var authKey: String?
    /// Called when a token is missing, expiring, expired or refused: return a new one (from your
    /// server, which grants it with the secret key). At most one call per token; while it runs,
    /// ops, pulls and live sync wait. Nil: requests go with ``authKey`` alone, and a refused or
    /// expired token waits for ``ReplicaAccess/setToken(_:)``.
    public var tokenProvider: AccessTokenProvider?
    /// PubNub's cipher key: payloads are encrypted as PubNub's SDKs do. An empty key is refused
    /// (``ReplicaError/emptyCipherKey``), never taken as "no encryption".
    public var cipherKey: String?
    /// The cryptor new payloads are encrypted with (every known cryptor always decrypts).
    public var cryptor: Cryptor = .aesCbc
    /// PubNub's origin: `host[:port]` over https, or a full `http://host:port` URL.
    public var origin = "ps.pndsn.com"
    /// Where the store lives.
    public var store: StoreLocation
    /// How the store is opened (migrations, durability, busy timeout, logger).
    public var storeOptions = StoreOptions()
    /// The outbox's retry policy and parallelism.
    public var outbox = OutboxOptions()
    /// What the reconciler pulls, and its conflict policies.
    public var reconciler = ReconcilerOptions()
    /// What live sync follows (channels besides the user's memberships, users, presence).
    public var live = LiveSyncOptions()
    /// How long ``Replica/suspend()`` lets sends in flight finish before it abandons them (they
    /// are probed on resume, never sent twice). iOS gives an app about 5 seconds.
    public var suspendBudget: TimeInterval = 4
    /// The most bytes of downloaded files kept in the store's cache (least recently used evicted
    /// beyond it): 100 MiB (`docs/files.md`, "The cache").
    public var fileCacheBytes = 100 << 20
    /// The network: nil for a URLSession transport whose requests end within 15 s (a long poll
    /// within its own timeout). Tests pass the simulator's `InProcessTransport`.
    public var transport: (any Transport)?
    /// The clock every backoff, deadline and timestamp reads. Tests pass a `VirtualClock`.
    public var clock: any ReplicaClock = SystemClock()
    /// Seeds every random choice (backoff jitter) so that a test replays exactly; nil: system randomness.
    public var seed: UInt64?
    /// Where the replica reports its metrics (requests, ops, conflicts, live lag, catch-up pages;
    /// `docs/metrics.md` lists them): nil for swift-metrics' global factory as it is when the
    /// replica is made, so bootstrap your backend first. Without one, nothing is reported and
    /// nothing is measurably spent.
    ///
    /// ```swift
    /// MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))  // at launch, once
    /// let replica = try Replica<DefaultChatCustom>(configuration)             // reports there
    /// ```
    public var metrics: (any MetricsFactory)?
    /// The label prefix of the replica's loggers (`<label>.outbox`, `.reconciler`, `.live`).
    public var logLabel = "pnreplicate"
    /// Where users, channels and memberships live: PubNub App Context (the default, as the Chat
    /// SDK uses it) or DataSync, its successor (`docs/datasync.md`). A store is bound to the
    /// backend it was first filled from: opened with the other, the replica refuses to start
    /// (``StoreError/objectBackendMismatch(stored:configured:)``).
    ///
    /// ```swift
    /// configuration.objectBackend = .dataSync(DataSyncOptions())   // DataSync needs a token
    /// ```
    public var objectBackend = ObjectBackendChoice.appContext
    /// A backend made from the replica's wire client, overriding ``objectBackend``: the testing
    /// kit's devices pass a test double here.
    package var objects: (@Sendable (PubNubClient) -> any ObjectBackend)?

    /// The backend of `client` this configuration names (nil: App Context, the outbox's default).
    func backend(_ client: PubNubClient) -> (any ObjectBackend)? {
        if let objects { return objects(client) }
        switch objectBackend {
        case .appContext: return nil
        case .dataSync(let options): return DataSyncBackend(client: client, options: options)
        }
    }

    /// A configuration with PubNub's keys, the user and the store; every policy at its default.
    public init(publishKey: String, subscribeKey: String, userId: String, store: StoreLocation) {
        self.publishKey = publishKey
        self.subscribeKey = subscribeKey
        self.userId = userId
        self.store = store
    }

    /// The access control of the replica's client: the configured token, checked to be for the user.
    func accessControl(clock: any ReplicaClock) throws -> AccessControl {
        let access = AccessControl(token: nil, userId: userId, clock: clock, requiresToken: tokenProvider != nil)
        if let authKey, !authKey.isEmpty {
            do {
                try access.setToken(authKey)
            } catch {
                throw ReplicaError.unusableToken(error)
            }
        }
        return access
    }

    /// The wire configuration and crypto module these settings make, checked.
    func wire() throws -> (PubNubConfiguration, CryptoModule?) {
        if cipherKey?.isEmpty == true { throw ReplicaError.emptyCipherKey }
        let configuration = try PubNubConfiguration(
            publishKey: publishKey, subscribeKey: subscribeKey, userId: userId, origin: origin, authKey: authKey)
        return (configuration, cipherKey.map { CryptoModule(cipherKey: $0, encryptWith: cryptor) })
    }

    /// ``storeOptions`` with ``clock`` as the store's clock: one clock for every part.
    var clockedStoreOptions: StoreOptions {
        var options = storeOptions
        options.clock = clock
        return options
    }

    /// A random source for one part: seeded from ``seed`` and `salt` when a seed is set.
    func random(_ salt: UInt64) -> any RandomNumberGenerator & Sendable {
        guard let seed else { return SystemRandomNumberGenerator() }
        return SplitMix64(seed: seed ^ salt)
    }
}

extension ReplicaConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The user, origin and store, and whether a token, a token provider and a cipher key are set;
    /// never the token or the cipher key themselves (`print`, `dump`, string interpolation and
    /// debuggers all show this).
    public var description: String {
        "ReplicaConfiguration(userId: \(userId), origin: \(origin), store: \(store), authKey: \(authKey == nil ? "none" : "set"), "
            + "tokenProvider: \(tokenProvider == nil ? "none" : "set"), cipherKey: \(cipherKey == nil ? "none" : "set"))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// What `dump` and debuggers show: ``description``, no secret.
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}

/// Errors of a ``Replica`` itself (its parts throw their own: `StoreError`, `OutboxError`, ...).
public enum ReplicaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// ``ReplicaConfiguration/cipherKey`` is empty (an unset variable?): refused rather than
    /// sending plaintext.
    case emptyCipherKey
    /// The replica is suspended: ``Replica/resume()`` first.
    case suspended
    /// ``ReplicaConfiguration/authKey`` is a token that cannot be used (for another user).
    case unusableToken(AccessTokenError)
    /// ``Replica/signOut(discardingUnsent:keepingPushRegistrations:)`` refused: these ops are not sent yet (pending, in flight, dead
    /// letters, conflicts), `count` in all; `opIds` names the oldest (at most 20) and `kinds`
    /// every kind among them. Send them first, or sign out with `discardingUnsent: true`.
    case unsentOps(count: Int, kinds: [String], opIds: [String])
    /// ``Replica/signOut(discardingUnsent:keepingPushRegistrations:)`` refused: another process holds the store's lock (a `listen`, a
    /// sync, a notification service extension sending). The message names it. Nothing changed.
    case storeInUse(String)
    /// ``Replica/signOut(discardingUnsent:keepingPushRegistrations:)`` could not remove a device's push registrations (offline, say):
    /// nothing was removed. Try again online, or sign out with `keepingPushRegistrations: true`
    /// (the device then keeps getting this user's pushes).
    case pushRemovalFailed(device: String, reason: String)
    /// The replica signed out (``Replica/signOut(discardingUnsent:keepingPushRegistrations:)``): its store is gone. Make a new replica.
    case signedOut

    public var description: String {
        switch self {
        case .emptyCipherKey: "the cipher key is empty; give the key, or leave it nil to send unencrypted"
        case .suspended: "the replica is suspended; call resume() first"
        case .unusableToken(let error): "the configured token cannot be used: \(error)"
        case .unsentOps(let count, let kinds, let opIds):
            "\(count) op(s) not sent yet (\(kinds.joined(separator: ", ")): \(opIds.joined(separator: ", "))\(count > opIds.count ? ", ..." : "")); "
                + "send them first, or discard them (discardUnsent, --discard-unsent)"
        case .storeInUse(let message): "cannot sign out: \(message)"
        case .pushRemovalFailed(let device, let reason):
            "cannot remove the push registrations of \(device): \(reason); nothing was removed (keepPushRegistrations goes on without)"
        case .signedOut: "the replica signed out and its store is gone; make a new replica"
        }
    }
}

/// Where a replica's users, channels and memberships live (``ReplicaConfiguration/objectBackend``).
/// Messages, reactions, files and presence are the same on both.
public enum ObjectBackendChoice: Sendable, Hashable {
    /// PubNub App Context (`/v2/objects`), the Chat SDK's: the default.
    case appContext
    /// PubNub DataSync (`/v1/datasync`), App Context's successor, where PubNub sends new apps:
    /// users, channels and memberships as DataSync records, in the classes `options` names
    /// (`docs/datasync.md`). Every DataSync request needs an Access Manager token.
    case dataSync(DataSyncOptions)

    /// The name a store is bound to and the CLI takes (`--objects`): `app-context` or `datasync`.
    public var name: String {
        switch self {
        case .appContext: "app-context"
        case .dataSync: "datasync"
        }
    }
}

// DataSync's expiry as the app sees it (`docs/datasync.md`, "Expiry").
extension ReplicaConfiguration {
    /// How far ahead the replica warns of an expiry: ``DataSyncOptions/expiryWarning`` on
    /// DataSync, nothing on App Context.
    var expiryWarning: TimeInterval? {
        switch objectBackend {
        case .appContext: nil
        case .dataSync(let options): options.expiryWarning
        }
    }
}

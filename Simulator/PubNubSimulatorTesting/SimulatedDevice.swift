import Foundation
import PubNubReplica
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// One device of a test: a store, its outbox and its reconciler, talking to a simulator through
/// an ``InProcessTransport`` whose faults the test controls, on a ``VirtualClock``.
///
/// Devices built on one server and one clock share a timeline: several devices of one user, or
/// of several users, can go offline, edit, heal and sync, and be compared with each other and with
/// the server through ``snapshot(channels:)`` and ``ReplicaSnapshot``.
///
/// ```swift
/// let clock = VirtualClock()
/// let server = PubNubServer(clock: clock)
/// let phone = try SimulatedDevice<DefaultChatCustom>(server: server, clock: clock, plan: FaultPlan(seed: 1, profile: .offline))
/// _ = try await phone.outbox.send(text: "on my way", to: "general")   // stored and queued
/// phone.transport.use(FaultPlan(seed: 1, profile: .flaky))             // the network comes back, badly
/// let report = try await phone.sync()                                    // push, settle conflicts, pull
/// #expect(try await phone.snapshot(channels: ["general"])
///     == (try await ReplicaSnapshot(server: server, userId: "me", channels: ["general"])))
/// ```
///
/// Randomness is seeded: the outbox's backoff jitter and the reconciler's come from ``seed``, so
/// a run replays exactly with the same seeds and fault plans.
///
/// ## Topics
///
/// ### Creating a device
///
/// - ``init(server:clock:userId:plan:storePath:seed:outboxOptions:reconcilerOptions:)``
/// - ``reopened(plan:seed:storePath:)``
/// - ``temporaryStorePath()``
///
/// ### Parts
///
/// - ``clock``
/// - ``server``
/// - ``transport``
/// - ``client``
/// - ``store``
/// - ``outbox``
/// - ``reconciler``
/// - ``storePath``
/// - ``seed``
///
/// ### Syncing and comparing
///
/// - ``sync(pushingFor:)``
/// - ``snapshot(channels:)``
/// - ``outboxEntries()``
/// - ``makeReconciler(options:seed:)``
/// - ``observer(userId:)``
public struct SimulatedDevice<Custom: ChatCustomData>: Sendable {
    /// The clock the outbox, the reconciler and the server read.
    public let clock: VirtualClock
    /// The simulator the device talks to.
    public let server: PubNubServer
    /// The device's network: scripted faults, a fault plan, a request log (``InProcessTransport``).
    public let transport: InProcessTransport
    /// The device's PubNub client, on ``transport``.
    public let client: PubNubClient
    /// The device's store.
    public let store: ChatStore<Custom>
    /// The device's outbox.
    public let outbox: Outbox<Custom>
    /// The device's reconciler, with the options given at creation.
    public let reconciler: Reconciler<Custom>
    /// The store's file.
    public let storePath: String
    /// The seed of the outbox's and the reconciler's random choices.
    public let seed: UInt64
    /// What makes the device's object backend (nil: App Context on ``server``).
    public let objects: (@Sendable (PubNubClient) -> any ObjectBackend)?

    /// A device of `userId` on `server`, whose requests meet `plan`'s faults.
    ///
    /// - Parameters:
    ///   - server: The simulator; build it on `clock` (`PubNubServer(clock: clock)`).
    ///   - clock: The clock of the outbox and the reconciler.
    ///   - storePath: The store's file; a new file in the temporary directory when nil. Pass the
    ///     path of an earlier device to start where it stopped.
    ///   - seed: Seeds the outbox's and the reconciler's jitter, as ``PubNubReplica/ReplicaConfiguration/seed`` does.
    ///   - crypto: PubNub's crypto module, for a device of an app with a cipher key.
    ///   - objects: Where the device's users, channels and memberships live, made from its client:
    ///     nil for App Context on `server`; a test double of ``Replicator/ObjectBackend`` runs the
    ///     object scenarios through the seam alone.
    public init(
        server: PubNubServer, clock: VirtualClock, userId: String = "me",
        plan: FaultPlan = FaultPlan(seed: 0, profile: .none), storePath: String? = nil, seed: UInt64 = 1,
        outboxOptions: OutboxOptions = OutboxOptions(), reconcilerOptions: ReconcilerOptions = ReconcilerOptions(),
        crypto: CryptoModule? = nil, authToken: String? = nil, objects: (@Sendable (PubNubClient) -> any ObjectBackend)? = nil
    ) throws {
        self.clock = clock
        self.server = server
        self.seed = seed
        transport = InProcessTransport(server: server, plan: plan)
        client = try PubNubClient.simulated(transport, userId: userId, crypto: crypto, authToken: authToken, clock: clock)
        self.storePath = storePath ?? Self.temporaryStorePath()
        // Wired as a Replica wires its parts (one owner of the wiring), without starting anything.
        var configuration = ReplicaConfiguration(
            publishKey: client.configuration.publishKey, subscribeKey: client.configuration.subscribeKey, userId: userId,
            store: .file(self.storePath))
        configuration.outbox = outboxOptions
        configuration.reconciler = reconcilerOptions
        configuration.seed = seed
        configuration.objects = objects
        self.objects = objects
        let parts = try Replica<Custom>.makeParts(configuration, store: nil, client: client, clock: clock)
        (store, outbox, reconciler) = (parts.store, parts.outbox, parts.reconciler)
    }

    /// The same user after a restart: a new process on the store file (``storePath`` unless
    /// another is given), with a new transport, outbox and reconciler, and the same options.
    public func reopened(plan: FaultPlan, seed: UInt64, storePath: String? = nil) throws -> SimulatedDevice {
        try SimulatedDevice(
            server: server, clock: clock, userId: client.configuration.userId, plan: plan,
            storePath: storePath ?? self.storePath, seed: seed, outboxOptions: outbox.options,
            reconcilerOptions: reconciler.options, crypto: client.crypto, objects: objects)
    }

    /// A new reconciler on this device's store, client and outbox, as a new process would make;
    /// its random choices are seeded with `seed`.
    public func makeReconciler(options: ReconcilerOptions = ReconcilerOptions(), seed: UInt64 = 1) -> Reconciler<Custom> {
        Reconciler(store: store, client: client, outbox: outbox, options: options, clock: clock, random: SplitMix64(seed: seed))
    }

    /// One sync of ``reconciler``: push the outbox for at most `seconds` of virtual time, settle
    /// conflicts, pull objects, history and reactions.
    public func sync(pushingFor seconds: TimeInterval = 120) async throws -> SyncReport {
        try await reconciler.sync(pushDeadline: clock.now.addingTimeInterval(seconds))
    }

    /// What the device holds: synced users and channels, the user's memberships, and the
    /// messages and reactions of `channels`.
    public func snapshot(channels: [String]) async throws -> ReplicaSnapshot {
        try await ReplicaSnapshot(store: store, userId: client.configuration.userId, channels: channels)
    }

    /// The ops waiting in the outbox, in order.
    public func outboxEntries() async throws -> [OutboxEntry] { try await store.fetch(store.queries.outbox()) }

    /// A fault-free client of the same server: another user, or a look at what the server holds.
    public func observer(userId: String = "observer") throws -> PubNubClient {
        try PubNubClient.simulated(InProcessTransport(server: server), userId: userId)
    }

    /// A new store path in this process's folder of temporary stores
    /// (`$TMPDIR/pnreplicate-stores/PID/`). Tests make thousands of stores and cannot all close
    /// them, so none is deleted while the process runs; the first store made by a later process
    /// removes the folders of processes that have ended.
    public static func temporaryStorePath() -> String {
        TemporaryStores.folder + "/device-\(UUID().uuidString).sqlite"
    }
}

extension PubNubClient {
    /// A client of the simulator through `transport`: the simulator's default keys (`demo`), the
    /// user `userId`, and an origin that no real network resolves (`http://sim.invalid`); with
    /// `authToken`, the Access Manager token it sends, whose expiry is read on `clock` (pass the
    /// server's virtual clock).
    public static func simulated(
        _ transport: any Transport, userId: String = "me", publishKey: String = "demo", subscribeKey: String = "demo",
        crypto: CryptoModule? = nil, authToken: String? = nil, clock: any ReplicaClock = SystemClock()
    ) throws(WireError) -> PubNubClient {
        PubNubClient(
            configuration: try PubNubConfiguration(
                publishKey: publishKey, subscribeKey: subscribeKey, userId: userId, origin: "http://sim.invalid", authKey: authToken),
            transport: transport, crypto: crypto, access: AccessControl(token: authToken, userId: userId, clock: clock))
    }
}

/// The folder of this process's temporary stores, made on first use; the folders of ended
/// processes are removed then.
enum TemporaryStores {
    static let folder: String = {
        let base = NSTemporaryDirectory() + "pnreplicate-stores"
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let me = getpid()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] {
            // `kill(pid, 0)` fails with ESRCH when no process has that id (EPERM: one exists).
            guard let pid = Int32(name), pid != me, kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: base + "/" + name)
        }
        let mine = base + "/\(me)"
        try? FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: true)
        return mine
    }()
}

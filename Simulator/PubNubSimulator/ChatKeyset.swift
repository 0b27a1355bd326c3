import Foundation
import PubNubWire
import ReplicaModel

/// A chat keyset of a given size, to seed a simulator with: channels with a history and
/// reactions, users, and memberships, written through the simulator's own request handling (so
/// they carry eTags, `updated` and timetokens as if clients had written them).
///
/// It is the keyset the request budget is measured on (docs/performance.md, "Requests per sync"):
///
/// ```swift
/// let server = PubNubServer(clock: clock)
/// try await ChatKeyset(channels: 200, messagesPerChannel: 50, reactionEvery: 5, users: 500, member: "me").seed(server)
/// ```
///
/// `pnreplicate simulator serve --keyset-channels 200` seeds the same keyset over HTTP.
public struct ChatKeyset: Sendable, Hashable {
    /// How many channels (``channelId(_:)``: `ch-0000`, `ch-0001`, ...).
    public var channels: Int
    /// Messages in each channel's history, in the Chat SDK's shape (`{type: text, text, files}`).
    public var messagesPerChannel: Int
    /// A reaction (`reaction`, 👍) by another user on every n-th message of each channel; 0: none.
    public var reactionEvery: Int
    /// How many users (``userId(_:)``: `u-0000`, ...), besides ``member``.
    public var users: Int
    /// The user who is a member of every channel (the device's user).
    public var member: String
    /// Other members of each channel (taken in turn from the users).
    public var otherMembersPerChannel: Int
    /// Where the users, channels and memberships are written: App Context (the default) or
    /// DataSync (`simulator serve --keyset-objects datasync`). Messages and reactions are the same.
    public var objects: Objects = .appContext
    /// How the channels' histories lie in time: interleaved (the default: a message of each
    /// channel in turn, as channels active at the same time are) or one channel's after another's.
    public var history: History = .interleaved

    /// How a keyset's channel histories lie in time.
    public enum History: String, Sendable, Hashable, CaseIterable {
        /// A message of each channel in turn: every channel's history spans the same time.
        case interleaved
        /// Each channel's history after the previous one's: no two overlap in time (the case a
        /// shared history request cannot serve beyond each channel's newest 25).
        case oneAfterAnother = "one-after-another"
    }

    /// The object service a keyset's users, channels and memberships are seeded into.
    public enum Objects: String, Sendable, Hashable, CaseIterable {
        /// App Context (`/v2/objects`).
        case appContext = "app-context"
        /// DataSync (`/v1/datasync`): memberships get ids of another client's making
        /// (``dataSyncMembershipId(channel:user:)``), so a replica finds them by their pair.
        case dataSync = "datasync"
    }

    /// The id a DataSync membership of the keyset has: `m-<channel>-<user>`, not pnreplicate's own
    /// form, as another client's would be.
    public static func dataSyncMembershipId(channel: String, user: String) -> String { "m-\(channel)-\(user)" }

    /// A keyset; the defaults are the budget's (200 channels x 50 messages, a reaction on every
    /// 5th, 500 users, `me` a member of every channel with two others).
    public init(
        channels: Int = 200, messagesPerChannel: Int = 50, reactionEvery: Int = 5, users: Int = 500, member: String = "me",
        otherMembersPerChannel: Int = 2
    ) {
        self.channels = channels
        self.messagesPerChannel = messagesPerChannel
        self.reactionEvery = reactionEvery
        self.users = users
        self.member = member
        self.otherMembersPerChannel = otherMembersPerChannel
    }

    /// What a chat member of the keyset needs granted, on either object backend: every channel
    /// (messages, reactions, presence, App Context channels and DataSync channels), every user
    /// (App Context `uuid` and DataSync `usr`), every DataSync membership, and every record of
    /// the app's own DataSync classes (entities and relationships). What
    /// `simulator serve --member-token-file` grants.
    public static var memberGrants: AccessGrants {
        let all = AccessPermissions(rawValue: 255)
        return AccessGrants(patterns: [
            .channel: ["^.*$": all], .group: ["^.*$": all], .uuid: ["^.*$": all], .user: ["^.*$": all],
            .dataSyncMembership: ["^.*$": all], .dataSyncEntity: ["^.*$": all], .dataSyncRelationship: ["^.*$": all],
        ])
    }

    /// The id of the `index`-th channel.
    public static func channelId(_ index: Int) -> String { "ch-" + Self.padded(index) }
    /// The id of the `index`-th user.
    public static func userId(_ index: Int) -> String { "u-" + Self.padded(index) }

    private static func padded(_ index: Int) -> String {
        let digits = String(index)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The channel ids.
    public var channelIds: [String] { (0..<channels).map(Self.channelId) }

    /// Seeds the keyset into `server`: its users and channels, the memberships, each channel's
    /// history and its reactions. Throws when the simulator refuses a write.
    public func seed(_ server: PubNubServer) async throws {
        let client = try Self.seedingClient(subscribeKey: server.subscribeKey)
        func perform(_ request: WireRequest) async throws {
            let response = await server.handle(request)
            guard (200..<300).contains(response.status) else {
                throw WireError.invalidArgument("seeding \(request.operation) failed with \(response.status)")
            }
        }
        let userCount = max(1, users)
        var memberships: [String: [String]] = [member: channelIds]
        // Each pair once: with fewer users than members per channel, the rotation below names a
        // user twice for a channel (DataSync answers a second create of a pair 409).
        var pairs = Set(channelIds.map { [member, $0] })
        for index in channelIds.indices {
            for other in 0..<otherMembersPerChannel where users > 0 {
                let user = Self.userId((index * otherMembersPerChannel + other) % userCount)
                if pairs.insert([user, channelIds[index]]).inserted { memberships[user, default: []].append(channelIds[index]) }
            }
        }
        switch objects {
        case .appContext:
            for index in 0..<users {
                await server.remoteEditUser(id: Self.userId(index), fields: ["name": .string("User \(index)")])
            }
            for (index, channel) in channelIds.enumerated() {
                await server.remoteEditChannel(id: channel, fields: ["name": .string("Channel \(index)")])
            }
            for (user, channels) in memberships.sorted(by: { $0.key < $1.key }) {
                for start in stride(from: 0, to: channels.count, by: 100) {
                    let set = channels[start..<min(start + 100, channels.count)].map { MembershipSet<JSONValue>(id: $0, status: "joined") }
                    try await perform(try client.appContext.setMembershipsRequest(userId: user, set: set, remove: []))
                }
            }
        case .dataSync:
            let dataSync = client.dataSync
            func create(_ resource: DataSyncResource, _ object: DataSyncObject) async throws {
                let request = try dataSync.createRequest(resource, object)
                let response = await server.dataSyncAsAdmin(request)
                guard response.status == 201 else {
                    throw WireError.invalidArgument("seeding \(request.operation) failed with \(response.status)")
                }
            }
            for index in 0..<users {
                try await create(.users, DataSyncObject(id: Self.userId(index), payload: ["name": .string("User \(index)")]))
            }
            if !(0..<users).map(Self.userId).contains(member) {
                try await create(.users, DataSyncObject(id: member, payload: ["name": .string(member)]))
            }
            for (index, channel) in channelIds.enumerated() {
                try await create(.channels, DataSyncObject(id: channel, payload: ["name": .string("Channel \(index)")]))
            }
            for (user, channels) in memberships.sorted(by: { $0.key < $1.key }) {
                for channel in channels {
                    try await create(.memberships, DataSyncObject(
                        id: Self.dataSyncMembershipId(channel: channel, user: user), channelId: channel, userId: user, status: "joined"))
                }
            }
        }
        func payload(_ n: Int, of index: Int) -> JSONValue {
            ["type": "text", "text": .string("message \(n) of channel \(index)"), "files": []]
        }
        var timetokens: [[UInt64]] = Array(repeating: [], count: channels)
        for (index, channel) in channelIds.enumerated() where history == .oneAfterAnother {
            let publisher = users > 0 ? Self.userId(index % userCount) : member
            timetokens[index] = await server.seedMessages(
                channel: channel, (0..<messagesPerChannel).map { payload($0, of: index) }, publisher: publisher)
        }
        for n in 0..<messagesPerChannel where history == .interleaved {
            for (index, channel) in channelIds.enumerated() {
                let publisher = users > 0 ? Self.userId(index % userCount) : member
                timetokens[index] += await server.seedMessages(channel: channel, [payload(n, of: index)], publisher: publisher)
            }
        }
        for (index, channel) in channelIds.enumerated() {
            guard reactionEvery > 0 else { continue }
            for (n, timetoken) in timetokens[index].enumerated() where n % reactionEvery == 0 {
                try await perform(try client.messageActions.addMessageActionRequest(
                    channel: channel, messageTimetoken: Timetoken(rawValue: timetoken), type: "reaction", value: "👍"))
            }
        }
    }

    /// A client that only builds requests (they are handed to `PubNubServer.handle`, never sent).
    private static func seedingClient(subscribeKey: String) throws -> PubNubClient {
        struct Unused: Transport {
            func send(_ request: WireRequest, to origin: Origin) async throws(TransportFailure) -> WireResponse {
                throw .notSent(reason: "seeding requests are handled in process")
            }
        }
        return PubNubClient(
            configuration: try PubNubConfiguration(publishKey: "seed", subscribeKey: subscribeKey, userId: "seed", origin: "sim.invalid"),
            transport: Unused())
    }
}

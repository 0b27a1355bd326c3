import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What a replica holds, in a form that compares: two devices with each other, or a device with
/// the server. Equal snapshots mean the same rows.
///
/// ```swift
/// let a = try await deviceA.snapshot(channels: ["general"])
/// let server = try await ReplicaSnapshot(server: server, userId: "me", channels: ["general"])
/// #expect(a == server, "\(a)\n\(server)")
/// ```
///
/// Users and channels are compared by their replicated fields and eTag (`updated` changes with
/// the eTag, and an empty `custom` is the same as none); objects a device created but never
/// synced (no eTag) are left out. Messages are `id@timetoken` (`id@pending` before the server
/// gave one), oldest first; a payload that is not in the chat format has the id
/// `pn:<channel>:<timetoken>`. Reactions are `channel/messageTimetoken/type/value/user`.
///
/// ## Topics
///
/// ### Taking a snapshot
///
/// - ``init(store:userId:channels:)``
/// - ``init(server:userId:channels:as:)``
/// - ``init()``
///
/// ### Contents
///
/// - ``users``
/// - ``channels``
/// - ``memberships``
/// - ``messages``
/// - ``reactions``
/// - ``description``
public struct ReplicaSnapshot: Equatable, Sendable, CustomStringConvertible {
    /// Users by id: their fields and eTag.
    public var users: [String: JSONValue] = [:]
    /// Channels by id: their fields and eTag.
    public var channels: [String: JSONValue] = [:]
    /// The memberships of the snapshot's user, by channel id: status, eTag and custom data.
    public var memberships: [String: JSONValue] = [:]
    /// The messages of each channel asked for, as `id@timetoken`, oldest first.
    public var messages: [String: [String]] = [:]
    /// Every reaction on those channels, as `channel/messageTimetoken/type/value/user`.
    public var reactions: Set<String> = []

    /// An empty snapshot.
    public init() {}

    /// What `store` holds: every synced user and channel, the memberships of `userId`, and the
    /// messages and reactions of `channels`.
    public init<Custom: ChatCustomData>(store: ChatStore<Custom>, userId: String, channels: [String]) async throws {
        let q = store.queries
        for user in try await store.fetch(q.users()) where user.eTag != nil {
            users[user.id] = try Self.object(user)
        }
        for channel in try await store.fetch(q.channels()) where channel.eTag != nil {
            self.channels[channel.id] = try Self.object(channel)
        }
        for member in try await store.fetch(q.memberships(ofUser: userId)) {
            memberships[member.channelId] = try Self.membership(status: member.status, eTag: member.eTag, custom: member.custom)
        }
        for channel in channels {
            let stored = try await store.fetch(q.messages(inChannel: channel))
            messages[channel] = stored.map { "\($0.id)@\($0.timetoken?.description ?? "pending")" }
            for message in stored {
                for action in try await store.fetch(q.actions(ofMessage: message.id)) {
                    reactions.insert(Self.reaction(
                        channel: channel, messageTimetoken: action.messageTimetoken?.description ?? "-", type: action.type,
                        value: action.value, userId: action.userId))
                }
            }
        }
    }

    /// What `server` holds: every user and channel (read through a fault-free client, page by
    /// page), the memberships of `userId` (their custom data read as `custom`'s membership type),
    /// and every stored message and reaction of `channels`.
    public init<Custom: ChatCustomData>(
        server: PubNubServer, userId: String, channels: [String], as custom: Custom.Type = DefaultChatCustom.self
    ) async throws {
        let client = try PubNubClient.simulated(InProcessTransport(server: server), userId: userId)
        // Through the library's pagers, so a repeated cursor is an error rather than a short
        // listing; a page with entries the client cannot read makes the snapshot fail too.
        for try await page in client.appContext.userPages(as: JSONValue.self) {
            try Self.refuseSkipped(page.skipped, in: "users")
            for user in page.data { users[user.id] = try Self.object(user) }
        }
        for try await page in client.appContext.channelPages(as: JSONValue.self) {
            try Self.refuseSkipped(page.skipped, in: "channels")
            for channel in page.data { self.channels[channel.id] = try Self.object(channel) }
        }
        for try await page in client.appContext.membershipPages(userId: userId, as: custom) {
            try Self.refuseSkipped(page.skipped, in: "memberships of \(userId)")
            for member in page.data {
                memberships[member.channel.id] = try Self.membership(status: member.status, eTag: member.eTag, custom: member.custom)
            }
        }
        for channel in channels {
            messages[channel] = await server.storedMessages(channel: channel).map { stored in
                let id = stored.message.objectValue?["id"]?.stringValue
                    ?? MessageIdentity.derivedId(channel: channel, timetoken: Timetoken(rawValue: stored.timetoken))
                return "\(id)@\(stored.timetoken)"
            }
            for action in await server.storedActions(channel: channel) {
                reactions.insert(Self.reaction(
                    channel: channel, messageTimetoken: String(action.messageTimetoken), type: action.type,
                    value: action.value, userId: action.uuid))
            }
        }
    }

    /// One field per line.
    public var description: String {
        "users \(users)\nchannels \(channels)\nmemberships \(memberships)\nmessages \(messages)\nreactions \(reactions.sorted())"
    }

    /// The replicated fields of a user or channel, with its eTag (`updated` is compared through it).
    static func object(_ value: some Encodable) throws -> JSONValue {
        var fields = try JSONValue(encoding: value).objectValue ?? [:]
        fields["updated"] = nil
        if fields["custom"] == .object([:]) { fields["custom"] = nil }
        return .object(fields)
    }

    static func membership(status: String?, eTag: String?, custom: some Encodable) throws -> JSONValue {
        ["status": status.map(JSONValue.string) ?? .null, "eTag": eTag.map(JSONValue.string) ?? .null,
         "custom": try JSONValue(encoding: custom)]
    }

    static func reaction(channel: String, messageTimetoken: String, type: String, value: String, userId: String) -> String {
        "\(channel)/\(messageTimetoken)/\(type)/\(value)/\(userId)"
    }

    /// A snapshot that left entries out would compare as equal when it should not.
    static func refuseSkipped(_ skipped: [String], in listing: String) throws {
        guard skipped.isEmpty else {
            throw WireError.decoding(operation: listing, status: 200, message: "unreadable entries: \(skipped)")
        }
    }
}

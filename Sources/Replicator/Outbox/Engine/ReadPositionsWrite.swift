import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// How a batch of read positions (``ReplicaStore/OutboxOperation/readPositions(_:)``) goes over
/// the wire, as the Chat SDK's `markAllMessagesAsRead` sends it: the user's memberships of those
/// channels are read (one request, filtered on their ids), then one membership PATCH sets each
/// channel's custom data (as the server holds it, with the position) and leaves its status and
/// type out, so the server keeps them. The PATCH's answer, filtered the same way, is each
/// membership's new version (its eTag is the next edit's base).
///
/// The read before the write makes the op safe to send again: a position the server holds
/// already (or a later one) is not written, and a membership the server no longer has is not
/// made again. A change of another custom key between the read and the write is overwritten, as
/// it is by the Chat SDK (`docs/chat.md`, "Mark all read").
enum ReadPositionsWrite {
    /// The longest filter expression a batch may need, in bytes: it goes in the URL of both requests.
    static let maxFilterBytes = 8192

    /// Whether a channel can be in a batch: its id can be named in App Context's filter
    /// (``AppContextFilter/canName(_:)``; decided at enqueue, before a backend is asked). One that
    /// cannot is marked read with a membership write of its own.
    static func canBatch(_ channel: String) -> Bool { AppContextFilter.canName(channel) }

    /// Whether one batch may hold `channels`: at most ``ReplicaStore/ReadPositions/maxChannels``
    /// (PubNub's limit per PATCH), their filter within ``maxFilterBytes``.
    static func fits(_ channels: [String]) -> Bool {
        channels.count <= ReadPositions.maxChannels && AppContextFilter.filter(channels).utf8.count <= maxFilterBytes
    }

    /// What one attempt sends: the set entries of the channels whose position still moves, and
    /// the server's memberships of the batch's channels as read.
    struct Plan {
        var sets: [ObjectWrite.MembershipFields]
        var server: [ChatMember<RawChatCustom>]
    }

    /// Reads the user's memberships of the batch's channels and plans the write
    /// (``ObjectWrite/setMemberships(user:_:answering:)``).
    static func plan(_ positions: ReadPositions, objects: any ObjectBackend, now: Date) async throws -> Plan {
        let server = try await objects.memberships(user: positions.user, channels: positions.channels)
        var sets: [ObjectWrite.MembershipFields] = []
        for mark in positions.marks {
            guard let remote = server[mark.channel] else { continue }
            let custom = remote.custom
            guard ReadPosition.moves(in: custom, to: mark.timetoken, now: now) else { continue }
            sets.append(ObjectWrite.MembershipFields(
                channel: mark.channel, fields: ["custom": .object(ReadPosition.setting(mark.timetoken, in: custom?.objectValue ?? [:]))]))
        }
        return Plan(sets: sets, server: Array(server.values))
    }
}

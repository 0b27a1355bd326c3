import Foundation
import ReplicaModel

/// The read positions one ``OutboxOperation/readPositions(_:)`` op writes: `user`'s position in
/// each channel of ``marks``, in one membership PATCH (mark all read).
///
/// ```swift
/// let op = OutboxOperation.readPositions(ReadPositions(user: "alice", marks: [
///     ReadMark(channel: "general", timetoken: Timetoken(rawValue: 17_000_000_000_000_000), previous: nil),
/// ]))
/// ```
public struct ReadPositions: Sendable, Hashable {
    /// Most channels one op writes: PubNub's limit of entries per membership PATCH.
    public static let maxChannels = 100

    /// The user whose memberships move (the current user).
    public var user: String
    /// One position per channel, in the order they were marked.
    public var marks: [ReadMark]

    /// Positions of `user`.
    public init(user: String, marks: [ReadMark]) {
        self.user = user
        self.marks = marks
    }

    /// The position this op writes in `channel`, if it writes one.
    public func mark(in channel: String) -> ReadMark? { marks.first { $0.channel == channel } }

    /// The channels this op writes.
    public var channels: [String] { marks.map(\.channel) }
}

/// One channel's new read position, with the one it replaced locally (restored when the op is
/// discarded).
public struct ReadMark: Sendable, Hashable, Codable {
    /// The channel.
    public var channel: String
    /// The new read position: the newest message the user has read.
    public var timetoken: Timetoken
    /// The position the membership showed before (nil: none), put back if the op is discarded.
    public var previous: Timetoken?
    /// The membership's eTag when it was marked: a discard puts ``previous`` back over that
    /// version only; over a newer one (pulled or answered since), whose own position the overlay
    /// hid, the stored eTag is dropped so the next pull stores the server's version again.
    public var eTag: String?

    /// A channel's new position.
    public init(channel: String, timetoken: Timetoken, previous: Timetoken?, eTag: String? = nil) {
        self.channel = channel
        self.timetoken = timetoken
        self.previous = previous
        self.eTag = eTag
    }
}

import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// Hot and cold channels: the one owner of which channels a sync or a gap fill pulls in full.
//
// A sync and a gap fill pull every channel's new messages (history is cheap: 100 channels a
// request) but list reactions and members only of the hot channels: those the app shows
// (``Reconciler/markHot(_:)``), or every channel with ``ReconcilerOptions/everyChannelHot``.
// A cold channel's reactions and members lag; the store says by how much
// (``ReplicaStore/ChatQueries/freshness(ofChannel:)``). See docs/reconciler.md, "Hot and cold channels".

/// Which channels are hot: counted marks, or every channel.
struct HotChannels: Sendable {
    /// How many times each channel is marked.
    private var marks: [String: Int] = [:]
    /// ``ReconcilerOptions/everyChannelHot``.
    let everyChannel: Bool

    init(everyChannel: Bool) {
        self.everyChannel = everyChannel
    }

    /// Adds a mark; returns whether the channel became hot (it had none).
    mutating func mark(_ channel: String) -> Bool {
        marks[channel, default: 0] += 1
        return marks[channel] == 1
    }

    /// Takes one mark back.
    mutating func unmark(_ channel: String) {
        guard let count = marks[channel] else { return }
        marks[channel] = count > 1 ? count - 1 : nil
    }

    /// Whether a sync or a gap fill lists the channel's reactions and members.
    func contains(_ channel: String) -> Bool { everyChannel || marks[channel] != nil }

    /// The marked channels, sorted.
    var marked: [String] { marks.keys.sorted() }
}

/// A cold channel's listings after a gap no listing covered.
enum ListingLag {
    /// For each of `channels` (filled without listing its reactions and members), the reaction
    /// and member checkpoints stop following the live checkpoint. They keep the last time they
    /// were known complete (`applied`, or the live checkpoint before the gap when the stream
    /// followed them since) and note the gap's end (`fillTop`): changes between the two may be
    /// missing until the channel is listed again (docs/reconciler.md, "Hot and cold channels").
    /// Channels never listed have no listing checkpoint and stay so.
    static func mark<Custom: ChatCustomData>(
        _ channels: some Sequence<String>, gapEnd: Timetoken, tx: StoreTransaction<Custom>, now: Date
    ) throws {
        for channel in channels {
            let live = try tx.checkpoint(SyncCheckpoint.live(channel))?.applied
            for scope in [SyncCheckpoint.reactions(channel), SyncCheckpoint.members(channel)] {
                guard var listing = try tx.checkpoint(scope), let applied = listing.applied else { continue }
                if listing.fillTop == nil, let live, live > applied { listing.applied = live }
                listing.fillTop = max(listing.fillTop ?? gapEnd, gapEnd)
                listing.updatedAt = now
                try tx.write(listing)
            }
        }
    }
}

/// What ``Reconciler/refresh(channel:)`` did.
public struct ChannelRefreshReport: Sendable {
    /// The channel.
    public var channel: String
    /// Its history catch-up.
    public var history: ChannelPullReport
    /// Its reactions made equal to the server's.
    public var reactions = ReactionSyncResult()
    /// Its members made equal to the server's.
    public var members = ObjectSyncResult()

    /// An empty report for `channel`.
    public init(channel: String) {
        self.channel = channel
        history = ChannelPullReport(channel: channel)
    }
}

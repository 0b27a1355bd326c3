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

/// Which channels are hot: counted marks, or every channel. Locked rather than actor-isolated so
/// that a replica reopening its store hands the marks to the new reconciler with no suspension
/// point in between (``Reconciler/restoreHotMarks(_:)``).
final class HotChannels: @unchecked Sendable {
    private let lock = NSLock()
    /// How many times each channel is marked.
    private var marks: [String: Int] = [:]
    /// ``ReconcilerOptions/everyChannelHot``.
    let everyChannel: Bool

    init(everyChannel: Bool) {
        self.everyChannel = everyChannel
    }

    /// Adds a mark; returns whether the channel became hot (it had none).
    func mark(_ channel: String) -> Bool {
        lock.withLock {
            marks[channel, default: 0] += 1
            return marks[channel] == 1
        }
    }

    /// Takes one mark back.
    func unmark(_ channel: String) {
        lock.withLock {
            guard let count = marks[channel] else { return }
            marks[channel] = count > 1 ? count - 1 : nil
        }
    }

    /// Replaces every mark (counts above 0).
    func replace(_ new: [String: Int]) { lock.withLock { marks = new.filter { $0.value > 0 } } }

    /// Whether a sync or a gap fill lists the channel's reactions and members.
    func contains(_ channel: String) -> Bool { everyChannel || lock.withLock { marks[channel] != nil } }

    /// The marked channels, sorted.
    var marked: [String] { lock.withLock { marks.keys.sorted() } }
}

/// How fresh a channel's listings are: what a listing and a gap write into its checkpoints.
enum ListingLag {
    /// A listing of `scope` taken against the server time `snapshot` made the store equal to
    /// the server's; it is recorded as complete through `recorded` (the snapshot, clamped to a
    /// verified time). A gap that ended after the snapshot (marked while the listing ran: a
    /// reconnect's fill) stays marked, since the listing did not cover it; a later listing
    /// already recorded is kept.
    static func listed<Custom: ChatCustomData>(
        _ scope: String, snapshot: Timetoken, through recorded: Timetoken, tx: StoreTransaction<Custom>, now: Date
    ) throws {
        var listing = SyncCheckpoint(scope: scope, applied: recorded, updatedAt: now)
        if let stored = try tx.checkpoint(scope) {
            if let applied = stored.applied, applied > recorded { listing.applied = applied }
            if let gapEnd = stored.fillTop, gapEnd > snapshot { listing.fillTop = gapEnd }
        }
        try tx.write(listing)
    }

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

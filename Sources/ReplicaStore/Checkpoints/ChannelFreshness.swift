import Foundation
import GRDB
import ReplicaModel

/// How fresh one listing of a channel (its reactions, or its members) is in the store.
///
/// Every channel gets its new messages on each sync and reconnect; a channel's reactions and
/// members are listed only while it is hot (docs/reconciler.md, "Hot and cold channels"). Live
/// events keep them current while the live sync follows the channel; a gap that passes without a
/// listing leaves a window in which changes may be missing.
public struct ListingFreshness: Sendable, Hashable {
    /// Every change up to this server time is in the store; nil when the channel's listing never
    /// ran (only live events and own writes are stored).
    public var completeThrough: Timetoken?
    /// The end of a gap since ``completeThrough`` that no listing has covered: changes between
    /// the two may be missing (live events after it were applied). Nil: none.
    public var gapEnd: Timetoken?

    /// A freshness.
    public init(completeThrough: Timetoken?, gapEnd: Timetoken?) {
        self.completeThrough = completeThrough
        self.gapEnd = gapEnd
    }

    /// Whether the channel's listing ever ran.
    public var wasListed: Bool { completeThrough != nil }

    /// Whether a gap no listing covered followed the last listing (``gapEnd`` is set).
    public var hasGap: Bool { gapEnd != nil }

    /// How far behind the store may be at `now`: `now` minus ``completeThrough`` (0 when that
    /// is in the future of `now`, infinity when the listing never ran). A hot channel, or one
    /// the live sync follows without a gap, stays within a few seconds.
    ///
    /// ```swift
    /// let freshness = try await replica.fetch(replica.queries.freshness(ofChannel: "general"))
    /// if freshness.reactions.lag(at: Date()) > 60 { showStaleBadge() }
    /// ```
    public func lag(at now: Date) -> TimeInterval {
        guard let completeThrough else { return .infinity }
        return max(0, now.timeIntervalSince(completeThrough.date))
    }

    /// The rule, from the listing's checkpoint and the channel's live checkpoint: while no gap
    /// followed the listing, live events kept it current up to the live checkpoint.
    init(listing: SyncCheckpoint?, live: SyncCheckpoint?) {
        guard let listing, let applied = listing.applied else {
            self.init(completeThrough: nil, gapEnd: nil)
            return
        }
        if let gapEnd = listing.fillTop {
            self.init(completeThrough: applied, gapEnd: gapEnd)
        } else {
            self.init(completeThrough: max(applied, live?.applied ?? applied), gapEnd: nil)
        }
    }
}

/// How fresh a channel is in the store (`ChatQueries.freshness(ofChannel:)`).
public struct ChannelFreshness: Sendable, Hashable {
    /// The channel.
    public var channel: String
    /// Every message published on the channel up to this timetoken is stored (its history or
    /// live checkpoint, whichever is later); nil when it was never pulled.
    public var messagesThrough: Timetoken?
    /// Its reactions (message actions).
    public var reactions: ListingFreshness
    /// Its members.
    public var members: ListingFreshness
}

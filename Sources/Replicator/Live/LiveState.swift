import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Where a `LiveSync` stands.
public enum LiveState: Sendable, Hashable, CustomStringConvertible {
    /// Asking the server for a cursor (a handshake).
    case connecting
    /// Filling gaps from history before the channels are declared live.
    case catchingUp(channels: [String])
    /// Connected, with every followed channel complete up to the cursor.
    case live
    /// A request failed; retrying after a backoff. The reason is one line, without keys.
    case offline(reason: String)
    /// `LiveSync.run()` returned (cancelled).
    case stopped

    /// `live`, `offline: reason`, ...
    public var description: String {
        switch self {
        case .connecting: "connecting"
        case .catchingUp(let channels): "catching up (\(channels.count) channel\(channels.count == 1 ? "" : "s"))"
        case .live: "live"
        case .offline(let reason): "offline: \(reason)"
        case .stopped: "stopped"
        }
    }
}

/// Why a channel is filled from history. See `docs/live.md`, "The gap rule".
public enum GapReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The first connect of this process (events since the last run are not in any buffer).
    case firstConnect = "first-connect"
    /// A request failed: events may have aged out or overflowed meanwhile.
    case reconnect
    /// An answer held as many events as the server's buffer (100): older ones may have been dropped.
    case fullBuffer = "full-buffer"
    /// The server answered from another region, or with a cursor older than the one sent.
    case cursorReset = "cursor-reset"
    /// The cursor moved further than ``LiveSyncOptions/maximumCursorJump`` in one answer.
    case cursorJump = "cursor-jump"
    /// An event could not be read or applied.
    case unreadableEvent = "unreadable-event"
    /// The channel was just added (a new membership or an app request).
    case newChannel = "new-channel"
}

/// What one gap fill did.
public struct GapFillReport: Sendable, Hashable {
    /// The channels filled, each with why.
    public var channels: [String: GapReason]
    /// The timetoken the filled channels are now complete up to (the live cursor when the fill began).
    public var through: Timetoken
    /// Messages the history pull stored for the first time: events the live stream did not deliver.
    public var recoveredMessages: Int
    /// Reactions added or removed by the reactions pull.
    public var reactionChanges: Int
    /// Whether App Context objects were pulled too.
    public var objects: Bool
}

/// How far a catch-up (a gap fill) has come, reported after each history page it applies:
/// `LiveActivity.catchUpProgress(_:)`, and `Replica`'s status while it catches up.
///
/// The total is not known ahead (PubNub does not say how many messages a channel holds since a
/// timetoken), so a progress view shows counts, not a fraction:
///
/// ```swift
/// if let progress = status.catchUp { label.text = "Catching up: \(progress.messages) messages" }
/// ```
public struct CatchUpProgress: Sendable, Hashable, CustomStringConvertible {
    /// The channels being caught up (those without messages to read included).
    public var channels: Int
    /// History pages applied so far.
    public var pages: Int
    /// Messages read from history so far (those already stored count too: they were checked).
    public var messages: Int

    /// Progress at the start of a catch-up of `channels` channels: nothing read yet.
    public init(channels: Int, pages: Int = 0, messages: Int = 0) {
        self.channels = channels
        self.pages = pages
        self.messages = messages
    }

    /// `2 channels, 3 pages, 250 messages`.
    public var description: String {
        "\(channels) channel\(channels == 1 ? "" : "s"), \(pages) page\(pages == 1 ? "" : "s"), \(messages) message\(messages == 1 ? "" : "s")"
    }
}

/// What a `LiveSync` reports, in order: state changes, each event received, each gap fill.
public enum LiveActivity: Sendable, Hashable {
    /// The state changed.
    case state(LiveState)
    /// An event arrived and was applied (or skipped, with the reason in its outcome).
    case event(LiveEventRecord)
    /// A catch-up applied a page of history: how far it has come (after
    /// ``LiveState/catchingUp(channels:)``, before ``gapFilled(_:)``).
    case catchUpProgress(CatchUpProgress)
    /// Channels were filled from history.
    case gapFilled(GapFillReport)
    /// A here-now replaced who is present on these channels (after a (re)connect or a gap):
    /// each channel with its occupancy.
    case presenceRefreshed([String: Int])
}

/// Counters of a ``LiveSync``, for tests, benchmarks and `pnreplicate listen`.
public struct LiveSyncStatistics: Sendable, Hashable {
    /// Subscribe answers received (handshakes excluded).
    public var answers = 0
    /// Envelopes received.
    public var events = 0
    /// Failed requests.
    public var failures = 0
    /// Gap fills, by reason (a fill of several channels counts once per channel).
    public var fills: [GapReason: Int] = [:]
    /// Messages the fills stored that the live stream had not delivered.
    public var recoveredMessages = 0
    /// Here-now calls that replaced the members' presence.
    public var presenceRefreshes = 0
    /// Heartbeats sent.
    public var heartbeats = 0
    /// Heartbeats that failed (never retried: the next one, or the next poll, renews presence).
    public var failedHeartbeats = 0
}

/// Errors of a live sync.
public enum LiveSyncError: Error, Sendable, CustomStringConvertible {
    /// Filling a channel from history failed; the fill is retried after a backoff.
    case gapFillFailed(channel: String, reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .gapFillFailed(let channel, let reason): "gap fill of \(channel) failed: \(reason)"
        }
    }
}

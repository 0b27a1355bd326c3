import Foundation
import ReplicaModel

/// Options of a `LiveSync`.
public struct LiveSyncOptions: Sendable {
    /// Channels to follow besides the current user's memberships (and ``ReconcilerOptions/channels``).
    public var channels: [String] = []
    /// User ids whose App Context events to follow besides the current user's own.
    public var users: [String] = []
    /// A cursor that moves further than this in one answer (seconds) may have skipped events
    /// that aged out of the server's buffer (PubNub keeps them 20 minutes): the channels are
    /// filled from history. An idle long poll moves it about 280 s. Default 10 minutes.
    public var maximumCursorJump: TimeInterval = 600
    /// How long to wait between failed requests (subscribe and gap fills): exponential with jitter,
    /// a 429's `Retry-After` at least.
    public var retry = RetryPolicy()
    /// How long the client waits for a long poll; longer than the server's hold (280 s).
    public var pollTimeout: Duration = .seconds(310)
    /// Presence: nil (the default) follows none; set, the live sync tells PubNub this user is
    /// here (heartbeats), keeps the members' `isPresent` and presence state current (here-now on
    /// every (re)connect and gap, presence events live) and leaves on stop. See `docs/presence.md`.
    public var presence: PresenceOptions?
    /// The typing timeout (seconds) of `LiveSync.typing`: the Chat SDK's `typingTimeout`, default 5.
    public var typingTimeout: TimeInterval = 5
    /// A subscribe filter on publish metadata (`filter-expr`). Events it filters out are still
    /// stored by history fills; leave it nil unless every writer agrees on it.
    public var filterExpression: String?
    /// How long `LiveSync.run()` waits before looking again when there is nothing to follow.
    public var idleInterval: TimeInterval = 5
    /// Send the next long poll while the previous answer is being stored, so that the network
    /// wait and the commit overlap (default true). The answer is applied after the commit as
    /// always; the early poll is dropped and sent again when anything it was built from changed
    /// (the channels, the cursor, a gap). Turn it off in a test that scripts faults request by
    /// request: with it, the poll after an answer is already on its way when the answer returns.
    public var pipelinePolls = true

    /// The most bytes the channel names of one subscribe request take in its path (percent-
    /// encoded, with their separators); default 28 KiB, which leaves 4 KiB of the ~32 KiB PubNub
    /// takes in a GET request for the rest of it: the path, the token, the presence state, the
    /// filter and the headers. Past it the channels are followed by several subscribe requests at
    /// once, each with its own cursor: about 1,360 channels of 20 characters each (`docs/live.md`,
    /// "Many channels"). A 414 from the server halves it for the rest of the run.
    public var subscribeBytes = 28 * 1024

    /// Channel groups that the app's server keeps equal to the current user's memberships
    /// (PubNub's Stream Controller; `docs/live.md`, "Channel groups"): live sync subscribes them by
    /// name, in one request, instead of naming each membership channel; the other followed
    /// channels (the user's own, channels with stored messages only) are named as before. Each
    /// membership channel is still filled from history after a gap. The token needs `read` on
    /// the groups; adding channels to them needs `manage`, which only the server should hold.
    /// Default none.
    public var channelGroups: [String] = []

    /// Default options.
    public init() {}
}

/// How a `LiveSync` follows presence (``LiveSyncOptions/presence``).
///
/// ```swift
/// var options = LiveSyncOptions()
/// options.presence = PresenceOptions(timeout: 60)     // heartbeats every 29 s
/// options.presence?.state = ["general": ["mood": "busy"]]
/// ```
public struct PresenceOptions: Sendable, Hashable {
    /// The presence timeout (seconds, `heartbeat`): PubNub announces a `timeout` for this user
    /// when it hears nothing from them for this long. PubNub's default and this one: 300; minimum 20.
    public var timeout: Int
    /// Seconds between heartbeats while connected; nil means `timeout / 2 - 1` (the JS and
    /// Python SDKs' rule); 0 sends none (the subscribe long poll is then the only heartbeat,
    /// enough while the timeout exceeds the server's 280 s hold).
    public var heartbeatInterval: TimeInterval?
    /// The channels whose presence is followed (`<channel>-pnpres`, here-now); nil follows every
    /// followed channel but the user-id channels. Listed channels are followed for messages too.
    public var channels: [String]?
    /// This user's presence state per channel, sent with each subscribe and heartbeat.
    public var state: [String: JSONValue] = [:]
    /// Whether stopping the run sends `leave`, so that others see this user go at once rather
    /// than after the timeout.
    public var leaveOnStop = true
    /// How long the `leave` on stop may take before the stop goes on without it.
    public var leaveTimeout: Duration = .seconds(2)

    /// Presence with a timeout of `timeout` seconds.
    public init(timeout: Int = 300, heartbeatInterval: TimeInterval? = nil, channels: [String]? = nil) {
        self.timeout = timeout
        self.heartbeatInterval = heartbeatInterval
        self.channels = channels
    }

    /// The interval actually used: ``heartbeatInterval``, or `timeout / 2 - 1`; nil for none.
    public var effectiveHeartbeatInterval: TimeInterval? {
        let interval = heartbeatInterval ?? Double(timeout / 2 - 1)
        return interval.isFinite && interval > 0 ? max(interval, 1) : nil
    }
}

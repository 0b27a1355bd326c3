import Foundation
import Logging
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Options of a `Reconciler`.
public struct ReconcilerOptions: Sendable {
    /// The app's own DataSync classes kept offline beside the chat (`docs/app-data.md`): each
    /// sync pulls what changed in each class, live events apply, and the store holds their
    /// records. Empty by default. Checked (``AppDataDeclaration/validate()``) and bound to the
    /// store when a replica opens; a changed declaration takes effect at the next open.
    ///
    /// ```swift
    /// configuration.reconciler.appData = AppDataDeclaration(classes: [poll, vote])
    /// ```
    public var appData = AppDataDeclaration()
    /// Messages per history page for one channel (1-100); default 100.
    public var pageSize = 100
    /// Messages per channel when several channels share one history request (1-25); default 25.
    public var multiChannelPageSize = 25
    /// A catch-up's fetcher runs ahead of its writer by up to this many pages, and pages that are
    /// ready together are committed in one transaction (with the checkpoint after the last), so a
    /// fast network pays one commit per several pages; default 32 (3,200 messages: about 30 ms
    /// of the writer on a laptop-class core, and a few MB held). 1 commits every page alone. On a
    /// slow network the pages arrive one by one and commit one by one, as soon as each is fetched.
    public var pagesPerCommit = 32
    /// Channels per shared history request; default 500, PubNub's most for one request
    /// (`docs/reconciler.md`).
    public var channelsPerRequest = 500
    /// The most bytes the channel ids of one shared history request take in its path, percent-
    /// encoded with their separators; default 16,384, half the ~32 KiB PubNub takes in a GET
    /// request: 500 channel ids of 30 characters fit. A request holds ``channelsPerRequest``
    /// channels or fewer when their ids are long.
    public var channelBytesPerRequest = 16_384
    /// On a channel's first pull, how many of its newest messages to fetch (older ones come with
    /// `Reconciler.loadOlder(channel:limit:)`); nil fetches the whole history. Default nil.
    public var initialMessages: Int?
    /// Channels to pull besides the current user's memberships and the channels with stored messages.
    public var channels: [String] = []
    /// Pull every user of the keyset (`listUsers`); default true. Turn it off for large keysets.
    public var pullAllUsers = true
    /// Pull every channel of the keyset (`listChannels`); default true.
    public var pullAllChannels = true
    /// Read the current user's mute list (`PN_PRV.<userId>.mute1`), as the Chat SDK does with
    /// `syncMutedUsers`; default true. One `GET` per full object pull, and per incremental one
    /// whose users listing names it (it changed) or did not run. Off, a pull does not read it (live
    /// sync still follows it, and each mute list write reads the server's list first).
    public var syncMuteList = true
    /// List every channel's reactions and members on each sync and gap fill, as if every channel
    /// were hot (`Reconciler.markHot(_:)`). Default false: only hot channels are listed, and the
    /// cost of a sync follows what changed, not the keyset. Turn it on for an app with a handful
    /// of channels that wants every one complete; each channel then costs two or three requests
    /// per sync and per reconnect (docs/reconciler.md, "Hot and cold channels").
    public var everyChannelHot = false
    /// A full object listing (which also removes what the server deleted) at least this often;
    /// incremental listings (`updated` filter) in between. Default one hour.
    public var fullListingInterval: TimeInterval = 3600
    /// How a failed pull request is retried (pulls are reads: every failure but a 4xx is retried).
    public var retry = RetryPolicy()
    /// Attempts of one pull request before the pull of that scope stops with the error; default 8.
    public var maxAttempts = 8
    /// Conflict policies per entity kind.
    public var conflicts = ConflictPolicies()
    /// Test hook: runs inside each history page's transaction before it commits; throwing rolls
    /// the page and its checkpoint back together, as a crash at that point would.
    public var beforeHistoryCommit: (@Sendable (String) throws -> Void)?

    /// How far PubNub's `/time` and the device clock may disagree (seconds) for the time to be
    /// trusted; default 120. Checkpoints never claim a time the device has not verified: a
    /// subscribe cursor alone is never trusted (docs/reliability.md, "Which times a checkpoint
    /// trusts"). A device whose clock is further off than this still works; its checkpoints
    /// then move only with the messages it stores.
    public var clockTolerance: TimeInterval = 120

    /// Default options.
    public init() {}
}

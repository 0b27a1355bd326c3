import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

extension LiveSync {
    /// The channels to subscribe (sorted): memberships, channels with messages, the options'
    /// channels, the current user's id, their moderation event channel and mute list (the Chat
    /// SDK's `PUBNUB_INTERNAL_MODERATION.<id>`, `PN_PRV.<id>.mute1`) and ``LiveSyncOptions/users``; and which of them carry
    /// messages (all but the user-id channels). Memberships are read on every call (an index
    /// lookup); the channels with messages (a scan) at most every ``channelRefreshInterval`` and
    /// after each fill, since only a pull or an own send adds one that is not already followed.
    func followedChannels() async throws -> (all: [String], messages: [String], presence: [String], memberships: Set<String>) {
        let store = reconciler.store
        let extra = options.channels + (options.presence?.channels ?? [])
        if let at = messageChannelsAt, clock.now.timeIntervalSince(at) < Self.channelRefreshInterval {
        } else {
            messageChannels = Set(try await reconciler.channelsOfInterest(extra: extra))
            messageChannelsAt = clock.now
        }
        let memberships = try await store.fetch(store.queries.channelIds(memberOf: reconciler.userId))
        let messages = messageChannels.union(memberships)
        // The current user's moderation events and their mute list (objects events) carry no chat
        // messages; followed only when the token (if any) lets them be read: one channel it does
        // not grant would make Access Manager refuse the whole subscribe. The user's own channel
        // carries the Chat SDK's mentions and invitations: it is filled after a gap like a channel
        // with messages when the sync pulls it (the token lets it be read), never given presence.
        let me = reconciler.userId
        let moderation = [ChatModeration.eventChannel(for: me), ChatModeration.muteListId(of: me)].filter {
            reconciler.tokenAllowsReading($0)
        }
        // The app's own classes' channels (docs/app-data.md, "Live"): events only, like the users'.
        let records = try await AppDataLive.channels(reconciler.options.appData, context: reconciler.context)
            .filter { reconciler.tokenAllowsReading($0) }
        let users: Set<String> = Set(options.users + [me] + moderation + records)
        let withMessages = messages.filter { !users.contains($0) || extra.contains($0) || $0 == me }.sorted()
        var presence: [String] = []
        if let options = options.presence {
            presence = options.channels.map { Array(Set($0)).sorted() } ?? withMessages.filter { $0 != me }
        }
        // Channels the current token does not allow reading stay out (Access Manager refuses the
        // whole subscribe otherwise); a new token lets them in again.
        let denied = deniedChannels.generation == reconciler.client.access.generation ? deniedChannels.names : []
        // A presence channel is subscribed as `<channel>-pnpres`: left out by that name.
        return (
            messages.union(users).subtracting(denied).sorted(), withMessages.filter { !denied.contains($0) },
            presence.filter { !denied.contains($0 + "-pnpres") }, Set(memberships).subtracting(denied)
        )
    }

    /// How often the channels with stored messages are read again (seconds on the injected clock).
    static var channelRefreshInterval: TimeInterval { 30 }


    /// An Access Manager denial of a subscribe or a fill (`docs/access.md`), or nil when the
    /// ordinary failure path (state, backoff) takes it:
    /// - every request waits for a token: the loop waits for one (no requests), then fills every
    ///   channel again;
    /// - a channel the token does not allow reading (its subscribe, or its history in a fill):
    ///   left out (a presence channel by its own name) until a new token arrives, after a backoff;
    /// - anything else not granted: an ordinary failure, backed off (a fill's listings the token
    ///   does not grant are skipped by the reconciler and never get here).
    func accessDenied(_ denial: AccessDenial) async throws -> Step? {
        if case .notGranted(let missing) = denial.reason {
            let unreadable = missing.filter { $0.kind == .channel && $0.permission == .read && $0.name != nil }
            guard !unreadable.isEmpty else { return nil }
            let channels = Set(unreadable.compactMap(\.name))
            if deniedChannels.generation != denial.generation { deniedChannels = ([], denial.generation) }
            deniedChannels.names.formUnion(channels)
            logger.warning("the token does not allow reading some channels; live sync leaves them out", metadata: [
                "channels": "\(channels.count)", "missing": "\(missing.prefix(3).map(\.description))",
            ])
            try await clock.sleep(until: clock.now.addingTimeInterval(backoff(minimum: 0)))
            return .failed
        }
        set(.offline(reason: "waiting for a token"))
        for channel in subscribed where needsFill[channel] == nil { needsFill[channel] = .reconnect }
        await reconciler.client.access.waitForToken(after: denial.generation)
        try Task.checkCancellation()
        return .failed
    }

}

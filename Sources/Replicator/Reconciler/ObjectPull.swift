import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What an object pull did, per scope.
public struct ObjectPullReport: Sendable, Hashable {
    /// Users (`listUsers`).
    public var users = ObjectSyncResult()
    /// Channels (`listChannels`).
    public var channels = ObjectSyncResult()
    /// The current user's memberships.
    public var memberships = ObjectSyncResult()
    /// Members of the channels of interest.
    public var members = ObjectSyncResult()
    /// Whether the user and channel listings were full (and pruned what the server deleted).
    public var full = false

    /// An empty report.
    public init() {}
}

extension Reconciler {
    /// Pulls App Context objects: users and channels (incrementally with an `updated` filter, or
    /// in full at least every ``ReconcilerOptions/fullListingInterval``, removing what the server
    /// no longer has), the current user's memberships, and the members of the channels of interest
    /// (both in full: membership lists are short and carry no deletions otherwise).
    ///
    /// Objects with unsent local edits keep showing them over the server's version.
    public func pullObjects(full: Bool? = nil, channels: [String]? = nil) async throws -> ObjectPullReport {
        var report = ObjectPullReport()
        let lastFull = try await store.fetch(store.queries.checkpoint("objects:full"))?.updatedAt
        let isFull = full ?? (lastFull.map { clock.now.timeIntervalSince($0) >= options.fullListingInterval } ?? true)
        report.full = isFull
        if options.pullAllUsers {
            report.users = try await pullListing(SyncCheckpoint.users, table: .users, full: isFull) { query async throws(WireError) in
                try await self.client.listUsers(query, as: Custom.User.self)
            } apply: { users in try await self.applyPulled(users: users) }
        }
        if options.pullAllChannels {
            report.channels = try await pullListing(SyncCheckpoint.channels, table: .channels, full: isFull) { query async throws(WireError) in
                try await self.client.listChannels(query, as: Custom.Channel.self)
            } apply: { channels in try await self.applyPulled(channels: channels) }
        }
        report.memberships = try await pullMemberships()
        for channel in try await channelsOfInterest(extra: channels ?? []) {
            report.members.add(try await pullMembers(channel: channel))
        }
        if isFull, options.pullAllUsers || options.pullAllChannels {
            try await store.saveCheckpoint(SyncCheckpoint(scope: "objects:full", updatedAt: clock.now))
        }
        return report
    }

    /// Pages a user or channel listing (``PubNubWire/ObjectPages``: `next` cursors, stopping on a short page),
    /// applying each page.
    private func pullListing<Object: Decodable & Hashable & Sendable & Identifiable & VersionedObject>(
        _ scope: String, table: ObjectTable, full: Bool,
        list: @escaping @Sendable (ObjectListQuery) async throws(WireError) -> ObjectPage<Object>,
        apply: @escaping @Sendable ([Object]) async throws -> ObjectSyncResult
    ) async throws -> ObjectSyncResult where Object.ID == String {
        let checkpoint = try await store.fetch(store.queries.checkpoint(scope))
        var query = ObjectListQuery(limit: 100)
        if !full, let since = checkpoint?.cursor {
            // Everything changed since the newest `updated` seen, oldest change first. `>=` re-reads
            // the objects of that instant (unchanged by eTag) rather than miss one that shares it.
            query.filter = "updated >= \"\(since)\""
            query.sort = ["updated:asc"]
        }
        var result = ObjectSyncResult()
        var seen = Set<String>()
        var newest = checkpoint?.cursor.flatMap { try? ISOTimestamp(parsing: $0) }
        for try await page in objectPages(scope, query, list) {
            logSkipped(page.skipped, scope: scope)
            result.add(try await apply(page.data))
            seen.formUnion(page.data.map(\.id))
            for stamp in page.data.compactMap(\.updated) where newest.map({ stamp > $0 }) ?? true { newest = stamp }
        }
        if full { result.removed = try await removeMissing(table: table, keeping: seen) }
        if let newest {
            try await store.saveCheckpoint(SyncCheckpoint(scope: scope, cursor: newest.description, updatedAt: clock.now))
        }
        return result
    }

    /// The current user's memberships, in full.
    private func pullMemberships() async throws -> ObjectSyncResult {
        let user = userId
        let members = try await pageAll("memberships:\(user)") { query async throws(WireError) in
            try await self.client.getMemberships(userId: user, query, as: Custom.self)
        } convert: { try $0.model(userId: user) }
        return try await replaceMemberships(of: .user(user), server: members)
    }

    /// A channel's members, in full.
    private func pullMembers(channel: String) async throws -> ObjectSyncResult {
        let members = try await pageAll("members:\(channel)") { query async throws(WireError) in
            try await self.client.getMembers(channelId: channel, query, as: Custom.self)
        } convert: { try $0.model(channelId: channel) }
        return try await replaceMemberships(of: .channel(channel), server: members)
    }

    /// Every element of a membership listing (``PubNubWire/ObjectPages``: `next` cursors, stopping on a short page).
    private func pageAll<Element: Decodable & Sendable & Hashable>(
        _ scope: String, list: @escaping @Sendable (ObjectListQuery) async throws(WireError) -> ObjectPage<Element>,
        convert: (Element) throws -> ChatMember<Custom>
    ) async throws -> [ChatMember<Custom>] {
        var members: [ChatMember<Custom>] = []
        for try await page in objectPages(scope, ObjectListQuery(limit: 100), list) {
            var skipped = page.skipped
            for element in page.data {
                do {
                    members.append(try convert(element))
                } catch {
                    skipped.append("\(error)")
                }
            }
            logSkipped(skipped, scope: scope)
        }
        return members
    }

    /// An App Context listing whose every page request goes through the retry loop.
    private func objectPages<Element: Decodable & Sendable & Hashable>(
        _ scope: String, _ query: ObjectListQuery,
        _ list: @escaping @Sendable (ObjectListQuery) async throws(WireError) -> ObjectPage<Element>
    ) -> ObjectPages<Element> {
        ObjectPages(scope: scope, query: query) { query in
            try await self.fetch(scope) { () async throws(WireError) in try await list(query) }
        }
    }

    /// Logs the objects of a page that were left out because they could not be read (an invalid
    /// id, a wrong type): one bad object from the server never stops a listing.
    func logSkipped(_ reasons: [String], scope: String) {
        for reason in reasons {
            logger.warning("skipped an object the server sent", metadata: ["scope": "\(scope)", "reason": "\(reason)"])
        }
    }

    /// The channels a sync pulls: ``ReconcilerOptions/channels``, `extra`, the current user's
    /// stored memberships and every channel with stored messages.
    public func channelsOfInterest(extra: [String] = []) async throws -> [String] {
        let stored = try await store.fetch(store.queries.channelIds(memberOrWithMessages: userId))
        return Array(Set(options.channels + extra + stored)).sorted()
    }
}

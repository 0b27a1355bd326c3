import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// App Context objects: listing users, channels and memberships, and storing them.

// MARK: Pulling

/// What an object pull did, per scope.
public struct ObjectPullReport: Sendable, Hashable {
    /// Users (`listUsers`).
    public var users = ObjectSyncResult()
    /// Channels (`listChannels`).
    public var channels = ObjectSyncResult()
    /// The current user's memberships.
    public var memberships = ObjectSyncResult()
    /// Members of the hot channels (`Reconciler.markHot(_:)`) and of those asked for.
    public var members = ObjectSyncResult()
    /// Whether the user and channel listings were full (and pruned what the server deleted).
    public var full = false
    /// Stored objects removed because their `expiresAt` had passed (DataSync's expiry; never on
    /// App Context), as the server removes them; an object with a pending local op stays.
    public var expired = 0

    /// An empty report.
    public init() {}
}

/// A reconciler's users, channels and memberships: listing them from the object backend (full or
/// since the last listing), storing them with the pending ops laid over, sweeping what expired,
/// and the Chat SDK's mute list. `docs/reconciler.md`, "Objects".
struct ObjectSync<Custom: ChatCustomData>: ReconcilerPart {
    let context: PullContext<Custom>

    /// What ``Reconciler/pullObjects`` does (its doc says how).
    func pullObjects(full: Bool? = nil, channels: [String]? = nil) async throws -> ObjectPullReport {
        try await pullObjects(full: full, members: .hot(and: channels ?? []), snapshot: nil).report
    }

    /// Whose members an object pull lists.
    enum MembersToList {
        /// The hot channels of interest, read after the user's memberships (a channel joined on
        /// another device counts at once), and these channels.
        case hot(and: [String])
        /// Exactly these channels (a gap fill's hot channels).
        case exactly([String])
    }

    /// ``pullObjects(full:channels:)`` listing the members of `members`, against `snapshot` (a
    /// `/time` answer taken before; nil: one is requested when a member listing needs it). Returns
    /// the snapshot the listings used (nil when none ran).
    func pullObjects(full: Bool?, members: MembersToList, snapshot: Timetoken?) async throws
        -> (report: ObjectPullReport, snapshot: Timetoken?)
    {
        var report = ObjectPullReport()
        let lastFull = try await store.fetch(store.queries.checkpoint("objects:full"))?.updatedAt
        let isFull = full ?? (lastFull.map { clock.now.timeIntervalSince($0) >= options.fullListingInterval } ?? true)
        report.full = isFull
        // A listing the token does not grant (Access Manager grants "every user" only by category)
        // is left out; the memberships and members below still name the users and channels.
        // An incremental users listing names the mute list when it changed (it is a user object):
        // only when it names a version other than the stored one, or could not read an object, is
        // the list read (`GET`). A full pull reads it always: a deleted list is learnt no other way.
        var muteListUnchanged = false
        if options.pullAllUsers {
            report.users = try await unlessNotGranted("users") {
                let listing = try await self.pullListing(SyncCheckpoint.users, table: .users, full: isFull) { [objects] page async throws(WireError) in
                    try await objects.users(page, as: Custom.User.self)
                } apply: { users in try await self.applyPulled(users: users) }
                if !isFull, listing.skipped == 0 {
                    let owner = userId
                    let stored = try await store.reading { try $0.moderation.serverMuteList(owner: owner) }
                    switch listing.seen[ChatModeration.muteListId(of: owner)] {
                    case nil: muteListUnchanged = true
                    case let eTag?: muteListUnchanged = eTag != nil && eTag == stored?.eTag
                    }
                }
                return listing.result
            }
        }
        if options.pullAllChannels {
            report.channels = try await unlessNotGranted("channels") {
                try await self.pullListing(SyncCheckpoint.channels, table: .channels, full: isFull) { [objects] page async throws(WireError) in
                    try await objects.channels(page, as: Custom.Channel.self)
                } apply: { channels in try await self.applyPulled(channels: channels) }.result
            }
        }
        // Before the memberships: removing an expired user or channel removes its memberships
        // too, and the listing below brings back those the server still has.
        report.expired = try await sweepExpired()
        report.memberships = try await unlessNotGranted("memberships") { try await self.pullMemberships(full: isFull) }
        if options.syncMuteList, !muteListUnchanged {
            _ = try await unlessNotGranted("mute list") {
                try await self.pullMuteList()
                return ObjectSyncResult()
            }
        }
        let listed: [String]
        switch members {
        case .hot(let extra): listed = try await channelsOfInterest(extra: extra).filter { hot.contains($0) || extra.contains($0) }
        case .exactly(let channels): listed = channels
        }
        var taken = snapshot
        if !listed.isEmpty {
            let snapshot: Timetoken
            if let taken { snapshot = taken } else { snapshot = try await serverSnapshot(atLeast: nil) }
            taken = snapshot
            for channel in listed {
                report.members.add(try await unlessNotGranted("members") { try await self.pullMembers(channel: channel, snapshot: snapshot) })
            }
        }
        if isFull, options.pullAllUsers || options.pullAllChannels {
            try await store.saveCheckpoint(SyncCheckpoint(scope: "objects:full", updatedAt: clock.now))
        }
        return (report, taken)
    }

    /// Removes the stored objects whose `expiresAt` has passed on the replica's clock (after the
    /// user and channel listings, before the memberships), as the server does (an incremental
    /// listing never says so, and no delete event is promised: `docs/datasync.md`, choice 2c);
    /// one with a pending local op stays, and that op meets the server's 404 as a conflict. A
    /// user or channel whose memberships are still stored is made bare instead of removed, so
    /// that they stay. Returns how many went. Reads an index that only DataSync
    /// objects fill: nothing on App Context.
    func sweepExpired() async throws(StoreError) -> Int {
        let now = clock.now
        let removed = try await store.storeTransaction { tx in
            let overlay = LocalOverlay(tx: tx)
            var removed: [ExpiringObject] = []
            // Memberships first: a user or channel whose stored memberships all expired goes
            // whole; one with memberships left is made bare, and they stay.
            let expired = try tx.expiredObjects(at: now)
            for object in expired.filter({ $0.kind == .membership }) + expired.filter({ $0.kind != .membership }) {
                let gone: Bool
                switch object.kind {
                case .user: gone = try overlay.serverExpired(.users, id: object.id)
                case .channel: gone = try overlay.serverExpired(.channels, id: object.id)
                case .membership: gone = try overlay.serverLacks(channelId: object.id, userId: object.userId ?? "")
                }
                if gone { removed.append(object) }
            }
            return removed
        }
        for object in removed { logger.notice("removed an expired object", metadata: ["object": "\(object)"]) }
        return removed.count
    }

    /// Runs a listing, or skips it (an empty result, a warning) when the token does not grant it.
    private func unlessNotGranted(
        _ what: String, _ body: () async throws -> ObjectSyncResult
    ) async throws -> ObjectSyncResult {
        do {
            return try await body()
        } catch {
            guard let denial = Reconciler<Custom>.accessDenial(in: error), case .notGranted = denial.reason else { throw error }
            logger.warning("listing skipped: the token does not grant it", metadata: ["listing": "\(what)", "missing": "\(denial.missing)"])
            return ObjectSyncResult()
        }
    }

    /// Pages a user or channel listing of the object backend (``PubNubWire/ObjectPages``: cursors,
    /// stopping on a short page), applying each page. Returns what applying did, the eTag of each
    /// id listed and how many objects could not be read.
    private func pullListing<Object: Decodable & Hashable & Sendable & Identifiable & VersionedObject>(
        _ scope: String, table: ObjectTable, full: Bool,
        list: @escaping @Sendable (ObjectPageRequest) async throws(WireError) -> ObjectBatch<Object>,
        apply: @escaping @Sendable ([Object]) async throws -> ObjectSyncResult
    ) async throws -> (result: ObjectSyncResult, seen: [String: String?], skipped: Int) where Object.ID == String {
        let checkpoint = try await store.fetch(store.queries.checkpoint(scope))
        var first = ObjectPageRequest()
        // Incremental: everything changed since the newest `updated` seen, oldest change first; the
        // backend re-reads the objects of that instant (unchanged by eTag) rather than miss one.
        if !full, let since = checkpoint?.cursor.flatMap({ try? ISOTimestamp(parsing: $0) }) { first.since = since }
        var result = ObjectSyncResult()
        var seen: [String: String?] = [:]
        var skipped = 0
        var newest = checkpoint?.cursor.flatMap { try? ISOTimestamp(parsing: $0) }
        for try await page in objectPages(scope, first, list) {
            logSkipped(page.skipped, scope: scope)
            skipped += page.skipped.count
            result.add(try await apply(page.data))
            for object in page.data { seen[object.id] = object.eTag }
            for stamp in page.data.compactMap(\.updated) where newest.map({ stamp > $0 }) ?? true { newest = stamp }
        }
        if full { result.removed = try await removeMissing(table: table, keeping: Set(seen.keys)) }
        if let newest {
            try await store.saveCheckpoint(SyncCheckpoint(scope: scope, cursor: newest.description, updatedAt: clock.now))
        }
        return (result, seen, skipped)
    }

    /// The current user's memberships: only what changed since the last listing when the backend
    /// answers listing totals (``ObjectBackendCapabilities/listingTotals``) and the total says
    /// nothing else changed; in full otherwise, and on a full pull. `docs/reconciler.md`,
    /// "Objects".
    private func pullMemberships(full: Bool) async throws -> ObjectSyncResult {
        let user = userId, scope = "memberships:\(user)"
        // Restrictions written by events from here on are newer than the listing.
        let mark = try await store.reading { try $0.moderation.restrictionMark() }
        let last = try await store.fetch(store.queries.checkpoint(scope))?.cursor.flatMap(MembershipListingMark.init(parsing:))
        if !full, objects.capabilities.listingTotals, let last {
            if let result = try await pullChangedMemberships(user: user, scope: scope, since: last, restrictionMark: mark) {
                return result
            }
            logger.debug("membership total differs from the store's: listing in full", metadata: ["user": "\(user)"])
        }
        var total: Int?
        let (members, skipped) = try await pageAll(scope, total: &total) { [objects] page async throws(WireError) in
            try await objects.memberships(of: .user(user), channels: nil, page, as: Custom.self)
        }
        let result = try await replaceMemberships(of: .user(user), server: members, complete: skipped == 0, restrictionMark: mark)
        let seen = MembershipListingMark(total: total ?? members.count + skipped, newest: members.compactMap(\.updated).max())
        try await store.saveCheckpoint(SyncCheckpoint(scope: scope, cursor: seen.description, updatedAt: clock.now))
        return result
    }

    /// The user's memberships changed since `last`: the listing read newest change first until a
    /// membership older than `last.newest`, applied over the store (nothing removed). Nil, with
    /// nothing stored, when the listing's total is not `last.total` plus the memberships new to
    /// the store: something was removed (or added unseen), which only a full listing tells.
    private func pullChangedMemberships(
        user: String, scope: String, since last: MembershipListingMark, restrictionMark: Int64
    ) async throws -> ObjectSyncResult? {
        var changed: [ChatMember<Custom>] = []
        var total: Int?
        var newest = last.newest
        let first = ObjectPageRequest(wantsTotal: true, newestFirst: true)
        pages: for try await page in objectPages(scope, first, { [objects] page async throws(WireError) in
            try await objects.memberships(of: .user(user), channels: nil, page, as: Custom.self)
        }) {
            if total == nil { total = page.totalCount }
            logSkipped(page.skipped, scope: scope)
            for member in page.data {
                // Strictly older than the newest seen: the rest is what the last listing read.
                if let updated = member.updated, let seen = last.newest, updated < seen { break pages }
                changed.append(member)
                if let updated = member.updated, newest.map({ updated > $0 }) ?? true { newest = updated }
            }
        }
        guard let total else { return nil }
        let listed = changed
        let applied: ObjectSyncResult? = try await store.storeTransaction { tx in
            // Point reads of the listed ones (one, re-read, when nothing changed), not the user's
            // whole membership table.
            let restricted = try tx.moderation.restrictedChannels(user: user)
            let new = try listed.filter { member in
                if let channel = ChatModeration.restrictedChannel(ofModerationChannel: member.channelId) {
                    return !restricted.contains(channel)
                }
                return try tx.member(channelId: member.channelId, userId: user) == nil
            }.count
            guard total == last.total + new else { return nil }
            return try Self.apply(listed, side: .user(user), complete: false, restrictionMark: restrictionMark, in: tx)
        }
        guard let applied else { return nil }
        let seen = MembershipListingMark(total: total, newest: newest)
        try await store.saveCheckpoint(SyncCheckpoint(scope: scope, cursor: seen.description, updatedAt: clock.now))
        return applied
    }

    /// A channel's members, in full, listed after the server time `snapshot`; the channel's
    /// member checkpoint then says they are complete up to it.
    func pullMembers(channel: String, snapshot: Timetoken) async throws -> ObjectSyncResult {
        let scope = SyncCheckpoint.members(channel)
        var total: Int?
        let (members, _) = try await pageAll(scope, total: &total) { [objects] page async throws(WireError) in
            try await objects.memberships(of: .channel(channel), channels: nil, page, as: Custom.self)
        }
        let result = try await replaceMemberships(of: .channel(channel), server: members)
        try await saveListing(scope, snapshot: snapshot)
        return result
    }

    /// Every element of a membership listing (``PubNubWire/ObjectPages``: `next` cursors, stopping
    /// on a short page), and how many were left out as unreadable.
    private func pageAll(
        _ scope: String, total: inout Int?,
        list: @escaping @Sendable (ObjectPageRequest) async throws(WireError) -> ObjectBatch<ChatMember<Custom>>
    ) async throws -> ([ChatMember<Custom>], skipped: Int) {
        var members: [ChatMember<Custom>] = []
        var skippedCount = 0
        // `wantsTotal`: a listing of exactly 100 or 200 stops at its total instead of asking for an empty page.
        for try await page in objectPages(scope, ObjectPageRequest(wantsTotal: true), list) {
            if total == nil { total = page.totalCount }
            members += page.data
            logSkipped(page.skipped, scope: scope)
            skippedCount += page.skipped.count
        }
        return (members, skippedCount)
    }

    /// An object backend's listing whose every page request goes through the retry loop.
    private func objectPages<Element: Decodable & Sendable & Hashable>(
        _ scope: String, _ first: ObjectPageRequest,
        _ list: @escaping @Sendable (ObjectPageRequest) async throws(WireError) -> ObjectBatch<Element>
    ) -> ObjectPages<Element> {
        ObjectListing.pages(scope: scope, first: first) { page in
            let batch = try await self.fetch(scope) { () async throws(WireError) in try await list(page) }
            ReplicatorMetrics.catchUpPage("objects", to: self.client.metrics)
            return batch
        }
    }

    /// What ``Reconciler/channelsOfInterest`` does (its doc says how).
    func channelsOfInterest(extra: [String] = []) async throws -> [String] {
        var stored = try await store.fetch(store.queries.channelIds(memberOrWithMessages: userId))
        // The user's own channel (the Chat SDK's mentions and invitations) only when the token
        // lets it be read: Access Manager would refuse the sync's history of it otherwise.
        if !tokenAllowsReading(userId) { stored.removeAll { $0 == userId } }
        return Array(Set(options.channels + extra + hot.marked + stored)).sorted()
    }

    /// What ``Reconciler/tokenAllowsReading`` does (its doc says how).
    func tokenAllowsReading(_ channel: String) -> Bool {
        guard let token = client.access.parsedToken else { return true }
        return token.grants.allows(AccessRequirement(.channel, channel, .read))
    }
}

// MARK: Applying

/// What applying pulled App Context objects did.
public struct ObjectSyncResult: Sendable, Hashable {
    /// Objects stored for the first time.
    public var inserted = 0
    /// Stored objects replaced by a newer server version.
    public var updated = 0
    /// Objects already stored at that version (same eTag, or the stored one is newer).
    public var unchanged = 0
    /// Local objects removed because the server no longer has them.
    public var removed = 0
    /// Objects whose local unsent edits were laid back over the server's version.
    public var overlaid = 0

    /// An empty result.
    public init() {}

    mutating func record<C: ChatCustomData>(_ applied: LocalOverlay<C>.Applied) {
        switch applied.outcome {
        case .inserted: inserted += 1
        case .updated: updated += 1
        case .unchanged: unchanged += 1
        }
        if applied.overlaid { overlaid += 1 }
    }

    /// Adds another result's counts to this one.
    public mutating func add(_ other: ObjectSyncResult) {
        inserted += other.inserted
        updated += other.updated
        unchanged += other.unchanged
        removed += other.removed
        overlaid += other.overlaid
    }
}

extension ObjectSync {
    /// Stores pulled users (newer `updated` wins, same eTag is a no-op) in one transaction; a user
    /// with unsent edits in the outbox keeps showing them over the new server version.
    func applyPulled(users: [ChatUser<Custom.User>]) async throws(StoreError) -> ObjectSyncResult {
        try await store.storeTransaction { tx in
            var result = ObjectSyncResult()
            for user in users { result.record(try LocalOverlay(tx: tx).applyServer(user: user)) }
            return result
        }
    }

    /// Stores pulled channels, as ``applyPulled(users:)`` does users.
    func applyPulled(channels: [ChatChannel<Custom.Channel>]) async throws(StoreError) -> ObjectSyncResult {
        try await store.storeTransaction { tx in
            var result = ObjectSyncResult()
            for channel in channels { result.record(try LocalOverlay(tx: tx).applyServer(channel: channel)) }
            return result
        }
    }

    /// After a full listing: removes the stored users or channels that came from the server (they
    /// have an eTag) and are not in `keeping`, unless a local op is pending on them. Objects known
    /// only by id (stubs made for memberships and messages) are left alone.
    func removeMissing(table: ObjectTable, keeping ids: Set<String>) async throws(StoreError) -> Int {
        try await store.storeTransaction { tx in
            var removed = 0
            for id in try tx.serverObjectIds(table) where !ids.contains(id) {
                if try LocalOverlay(tx: tx).serverLacks(table, id: id) { removed += 1 }
            }
            return removed
        }
    }

    /// Makes the stored memberships of one side (a user's channels, or a channel's members) equal
    /// to a complete server listing, in one transaction; memberships with a pending local op keep
    /// the local version.
    ///
    /// A user's memberships of moderation channels are their restrictions
    /// (``ReplicaStore/StoreTransaction/replaceRestrictions(user:listed:since:complete:)``).
    ///
    /// - Parameters:
    ///   - complete: whether the listing held every membership (none was unreadable): only then are
    ///     the user's restrictions it lacks lifted (a moderation membership the store's custom
    ///     types cannot read must not lift a ban).
    ///   - restrictionMark: taken before the listing was read (a user's listing).
    func replaceMemberships(
        of side: MembershipSide, server: [ChatMember<Custom>], complete: Bool = true, restrictionMark: Int64? = nil
    ) async throws(StoreError) -> ObjectSyncResult {
        try await store.storeTransaction { tx in
            try Self.apply(server, side: side, complete: complete, restrictionMark: restrictionMark, removingUnlisted: true, in: tx)
        }
    }

    /// Stores listed memberships of one side in `tx` (``replaceMemberships(of:server:complete:restrictionMark:)``);
    /// with `removingUnlisted` (a complete listing) the stored ones it lacks go.
    static func apply(
        _ server: [ChatMember<Custom>], side: MembershipSide, complete: Bool, restrictionMark: Int64?,
        removingUnlisted: Bool = false, in tx: StoreTransaction<Custom>
    ) throws -> ObjectSyncResult {
        let overlay = LocalOverlay(tx: tx)
        var result = ObjectSyncResult()
        var seen = Set<[String]>()
        var listed: [ListedRestriction] = []
        for member in server {
            if case .user = side, let channel = ChatModeration.restrictedChannel(ofModerationChannel: member.channelId) {
                let custom = try member.custom.map { try JSONValue(encoding: $0) }
                listed.append(ListedRestriction(
                    ChatModeration.restriction(user: member.userId, channel: channel, custom: custom),
                    updated: member.updated?.description, eTag: member.eTag))
                continue
            }
            seen.insert([member.channelId, member.userId])
            result.record(try overlay.applyServer(member: member))
        }
        if removingUnlisted {
            for (channel, user) in try tx.memberships(of: side) where !seen.contains([channel, user]) {
                if try overlay.serverLacks(channelId: channel, userId: user) { result.removed += 1 }
            }
        }
        if case .user(let user) = side, let restrictionMark {
            result.updated += try tx.moderation.replaceRestrictions(user: user, listed: listed, since: restrictionMark, complete: complete)
        }
        return result
    }
}

// The Chat SDK's moderation data a pull reads (`docs/chat.md`, "Moderation"): the current user's
// restrictions come with their memberships listing (no request of their own: the store turns
// each moderation membership into a restriction; `replaceMemberships` prunes the lifted ones);
// the mute list is one `GET` of the user object `PN_PRV.<userId>.mute1` per object pull.
extension ObjectSync {
    /// What ``Reconciler/pullMuteList`` does (its doc says how).
    @discardableResult
    func pullMuteList() async throws -> Bool {
        let owner = userId, id = ChatModeration.muteListId(of: owner)
        let user = try await fetch("mute-list") { [objects] () async throws(WireError) -> ChatUser<JSONValue>? in
            try await objects.user(id: id, as: JSONValue.self)
        }
        let list = user.map {
            StoredMuteList(muted: ChatModeration.mutedUsers(fromCustom: $0.custom), updated: $0.updated?.description, eTag: $0.eTag)
        }
        return try await ops.commit { try $0.overlay.applyServer(muteList: list, owner: owner) }
    }
}

/// What the last listing of the user's memberships saw, kept in its checkpoint's cursor
/// (`memberships:<user>`, as `<total> <newest updated>`): the server's total and the newest
/// `updated`. The next incremental listing reads down to `newest` and expects `total` plus the
/// memberships new to the store.
struct MembershipListingMark: Hashable, Sendable, CustomStringConvertible {
    var total: Int
    var newest: ISOTimestamp?

    init(total: Int, newest: ISOTimestamp?) {
        self.total = total
        self.newest = newest
    }

    /// Reads a cursor written by ``description``; nil for anything else (a full listing follows).
    init?(parsing text: String) {
        let parts = text.split(separator: " ", maxSplits: 1)
        guard let first = parts.first, let total = Int(first), total >= 0 else { return nil }
        self.total = total
        if parts.count == 2 {
            guard let newest = try? ISOTimestamp(parsing: String(parts[1])) else { return nil }
            self.newest = newest
        }
    }

    var description: String { newest.map { "\(total) \($0)" } ?? "\(total)" }
}

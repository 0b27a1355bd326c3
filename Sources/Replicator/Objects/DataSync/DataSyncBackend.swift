import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// What a replica on DataSync is configured with (`docs/datasync.md`, "Expiry and configurable
/// classes"): the classes it creates users and channels in, and the membership class version.
///
/// ```swift
/// var options = DataSyncOptions()
/// options.userClass = .init(name: "ChatUser", version: 1, level: .subKey)   // a User subclass with the app's TTL
/// ```
public struct DataSyncOptions: Sendable, Hashable {
    /// A class as a create names it.
    public struct ObjectClass: Sendable, Hashable {
        /// The class name.
        public var name: String
        /// The class version.
        public var version: Int
        /// Global (PubNub's built-in) or SubKey (the keyset's own).
        public var level: DataSyncClassLevel

        /// A class.
        public init(name: String, version: Int = 1, level: DataSyncClassLevel = .subKey) {
            self.name = name
            self.version = version
            self.level = level
        }

        /// PubNub's built-in `User`, version 1 (30 days, cannot be changed).
        public static let user = ObjectClass(name: "User", level: .global)
        /// PubNub's built-in `Channel`, version 1 (30 days).
        public static let channel = ObjectClass(name: "Channel", level: .global)
    }

    /// The class new users are created in (the built-in `User` unless set).
    public var userClass = ObjectClass.user
    /// The class new channels are created in (the built-in `Channel` unless set).
    public var channelClass = ObjectClass.channel
    /// The version of the `Membership` class memberships are created in.
    public var membershipClassVersion = 1
    /// A `Membership` subclass new memberships are created in (`relationshipClass` on the create),
    /// for a time to live other than the built-in class's 30 days; nil (the default) sends no class:
    /// the built-in `Membership`. Whether PubNub accepts a class on `/memberships` is unconfirmed
    /// (`docs/datasync.md`, "Memberships: the caveat"); the simulator does.
    public var membershipClass: String?
    /// How long before a followed object expires the replica warns about it
    /// (`ReplicaStatus.expiring`, `Replica.expiryWarnings()`): 3 days unless set.
    public var expiryWarning: TimeInterval = 3 * 86_400

    /// The built-in classes.
    public init() {}
}

/// PubNub DataSync (`/v1/datasync`) behind the object-backend seam (`docs/datasync.md`): users,
/// channels and memberships as DataSync records, mapped by ``DataSyncMapping``; listings with
/// forward cursors and an `updatedAt >=` filter; writes as JSON Patches of the changed fields
/// with `If-Match`, creates that are create-only, and the `e: 5` live events.
public struct DataSyncBackend: ObjectBackend {
    /// The wire client every request goes through.
    public let client: PubNubClient
    /// The classes it creates in.
    public let options: DataSyncOptions

    /// DataSync through `client`.
    public init(client: PubNubClient, options: DataSyncOptions = DataSyncOptions()) {
        self.client = client
        self.options = options
    }

    /// `datasync`.
    public var name: String { "datasync" }

    /// DataSync's id rule (``PubNubWire/DataSyncIdentifier``): no whitespace, `,`, `:`, `*`, `/`,
    /// `\\` or control character, 1 to 255 characters.
    public func identifierProblem(_ id: String) -> String? { DataSyncIdentifier.problem(id) }

    /// Membership writes are conditional: a membership edit is a PATCH with the edit's base eTag
    /// as `If-Match` (412 when the server's changed since), so the outbox does not read before it
    /// writes, and no change made between a read and the write goes unseen. A resent edit whose
    /// answer was lost is compared with the server's membership first (the outbox's probe), so it
    /// never meets its own eTag. No create-only precondition: a create meeting an existing record
    /// settles inside ``write(_:)``.
    public var capabilities: ObjectBackendCapabilities {
        ObjectBackendCapabilities(conditionalMembershipWrites: true, nativeCreateOnly: false)
    }

    /// The DataSync query of a page request: `since` becomes `updatedAt >= "…"`, oldest change
    /// first.
    static func query(_ page: ObjectPageRequest) -> DataSyncListQuery {
        var query = DataSyncListQuery()
        query.limit = page.limit
        query.cursor = page.cursor
        if let since = page.since {
            query.filterFast = #"updatedAt >= "\#(since.description)""#
            query.sort = ["updatedAt"]
        } else if page.newestFirst {
            query.sort = ["updatedAt:desc"]
        }
        return query
    }

    /// The models of a page; a record the model refuses is skipped with its reason.
    static func batch<Item>(_ page: DataSyncPage, _ model: (DataSyncRow) throws -> Item) -> ObjectBatch<Item> {
        var items: [Item] = []
        var skipped = page.skipped
        for row in page.data {
            do {
                items.append(try model(row))
            } catch {
                skipped.append("\(row.id): \(error)")
            }
        }
        return ObjectBatch(items: items, skipped: skipped, next: page.next)
    }

    public func users<C: CustomData>(_ page: ObjectPageRequest, as custom: C.Type) async throws(WireError)
        -> ObjectBatch<ChatUser<C>>
    {
        Self.batch(try await client.dataSync.list(.users, Self.query(page))) { try DataSyncMapping.user($0, as: C.self) }
    }

    public func channels<C: CustomData>(_ page: ObjectPageRequest, as custom: C.Type) async throws(WireError)
        -> ObjectBatch<ChatChannel<C>>
    {
        Self.batch(try await client.dataSync.list(.channels, Self.query(page))) { try DataSyncMapping.channel($0, as: C.self) }
    }

    public func memberships<C: ChatCustomData>(
        of side: MembershipSide, channels: [String]?, _ page: ObjectPageRequest, as custom: C.Type
    ) async throws(WireError) -> ObjectBatch<ChatMember<C>> {
        var query = Self.query(page)
        switch side {
        case .user(let user):
            query.userId = user
            if let channels, channels.count == 1 { query.channelId = channels[0] }
        case .channel(let channel):
            query.channelId = channel
        }
        return Self.batch(try await client.dataSync.list(.memberships, query)) { try DataSyncMapping.membership($0, as: C.self) }
    }

    public func user<C: CustomData>(id: String, as custom: C.Type) async throws(WireError) -> ChatUser<C>? {
        try await client.dataSync.get(.users, id: id).map { row throws(WireError) in try Self.model(row) { try DataSyncMapping.user($0, as: C.self) } }
    }

    public func channel<C: CustomData>(id: String, as custom: C.Type) async throws(WireError) -> ChatChannel<C>? {
        try await client.dataSync.get(.channels, id: id).map { row throws(WireError) in try Self.model(row) { try DataSyncMapping.channel($0, as: C.self) } }
    }

    /// A model of one record, or a decoding error naming it.
    static func model<T>(_ row: DataSyncRow, _ make: (DataSyncRow) throws -> T) throws(WireError) -> T {
        do {
            return try make(row)
        } catch {
            throw .decoding(operation: "DataSync \(row.id)", status: 200, message: "\(error)")
        }
    }

    /// `e: 5` events of users, channels and memberships (the older shapes too: `entity` with a
    /// `User` or `Channel` class, `relationship` with `Membership`); nil for anything else (an
    /// app's entities and relationships, an App Context event), which live apply then ignores.
    public func events(in envelope: SubscribeEnvelope) -> [ObjectEvent]? {
        guard case .dataSync(let event) = envelope.event else { return nil }
        let row = event.row
        let updated = row.updatedAt?.description
        switch (Self.kind(of: event), event.verb) {
        case (.users?, .create), (.users?, .update):
            return [.userSet(id: row.id, fields: DataSyncMapping.fields(FieldSchema.user, of: row), updated: updated, eTag: row.eTag, complete: true)]
        case (.users?, .delete):
            return [.userRemoved(id: row.id)]
        case (.channels?, .create), (.channels?, .update):
            return [.channelSet(
                id: row.id, fields: DataSyncMapping.fields(FieldSchema.channel, of: row), updated: updated, eTag: row.eTag, complete: true)]
        case (.channels?, .delete):
            return [.channelRemoved(id: row.id)]
        case (.memberships?, .create), (.memberships?, .update):
            guard let channel = row.channelId ?? row.entityAId, let user = row.userId ?? row.entityBId else { return [] }
            return [.membershipSet(channel: channel, user: user, fields: DataSyncMapping.fields(FieldSchema.membership, of: row), updated: updated, eTag: row.eTag)]
        case (.memberships?, .delete):
            // A delete names only the record: pnreplicate's ids name their pair; another client's
            // is found by the id the store keeps.
            guard let pair = DataSyncMapping.pair(ofMembershipId: row.id) else { return [.membershipRemovedById(row.id)] }
            return [.membershipRemoved(channel: pair.channel, user: pair.user)]
        default:
            return nil
        }
    }

    /// The resource an event is about: `metadata.type`, or for the older shapes the class name.
    static func kind(of event: DataSyncEvent) -> DataSyncResource? {
        let name = (event.className ?? "").split(separator: ":").first.map(String.init) ?? ""
        switch event.type {
        case "user": return .users
        case "channel": return .channels
        case "membership": return .memberships
        case "entity" where name == "User": return .users
        case "entity" where name == "Channel": return .channels
        case "relationship" where name == "Membership": return .memberships
        default: return nil
        }
    }
}

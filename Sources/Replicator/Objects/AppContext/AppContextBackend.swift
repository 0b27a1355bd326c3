import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// PubNub App Context (`/v2/objects`) behind the object-backend seam: listings with `next`
/// cursors and an `updated >=` filter, `If-Match` on user and channel writes, membership writes
/// through the user's memberships PATCH (no `If-Match`, no create-only: the outbox reads first,
/// ``ObjectBackendCapabilities``), and the `e: 2` live events.
public struct AppContextBackend: ObjectBackend {
    /// The wire client every request goes through (Access Manager, retries' classes, crypto).
    public let client: PubNubClient

    /// App Context through `client`.
    public init(client: PubNubClient) { self.client = client }

    /// `app-context`.
    public var name: String { "app-context" }

    /// No conditional membership writes, no create-only; listings answer their `totalCount`.
    public var capabilities: ObjectBackendCapabilities {
        ObjectBackendCapabilities(conditionalMembershipWrites: false, nativeCreateOnly: false, listingTotals: true)
    }

    /// The App Context query of a page request: `start` is the cursor; `since` becomes the
    /// `updated >=` filter, oldest change first; `newestFirst` sorts by `updated:desc`.
    static func query(_ page: ObjectPageRequest, filter: String? = nil) -> ObjectListQuery {
        var query = ObjectListQuery(limit: page.limit, start: page.cursor, count: page.wantsTotal, filter: filter)
        if let since = page.since {
            query.filter = AppContextFilter.updated(since: since.description)
            query.sort = ["updated:asc"]
        } else if page.newestFirst {
            query.sort = ["updated:desc"]
        }
        return query
    }

    static func batch<Item>(_ page: ObjectPage<Item>) -> ObjectBatch<Item> {
        ObjectBatch(items: page.data, skipped: page.skipped, next: page.next, totalCount: page.totalCount)
    }

    public func users<C: CustomData>(_ page: ObjectPageRequest, as custom: C.Type) async throws(WireError)
        -> ObjectBatch<ChatUser<C>>
    {
        Self.batch(try await client.appContext.listUsers(Self.query(page), as: C.self))
    }

    public func channels<C: CustomData>(_ page: ObjectPageRequest, as custom: C.Type) async throws(WireError)
        -> ObjectBatch<ChatChannel<C>>
    {
        Self.batch(try await client.appContext.listChannels(Self.query(page), as: C.self))
    }

    public func memberships<C: ChatCustomData>(
        of side: MembershipSide, channels: [String]?, _ page: ObjectPageRequest, as custom: C.Type
    ) async throws(WireError) -> ObjectBatch<ChatMember<C>> {
        let answer: ObjectPage<ChatMember<C>>
        switch side {
        case .user(let user):
            // Narrowed with a filter when every id can be named in one (one request for up to 100).
            let filter = channels.flatMap { $0.allSatisfy(AppContextFilter.canName) ? AppContextFilter.filter($0) : nil }
            let wire = try await client.appContext.getMemberships(userId: user, Self.query(page, filter: filter), as: C.self)
            answer = try Self.models(wire) { element throws(ModelValidationError) in try element.model(userId: user) }
        case .channel(let channel):
            let wire = try await client.appContext.getMembers(channelId: channel, Self.query(page), as: C.self)
            answer = try Self.models(wire) { element throws(ModelValidationError) in try element.model(channelId: channel) }
        }
        return Self.batch(answer)
    }

    /// A membership page as model memberships; an element the model refuses is skipped, as an
    /// unreadable element is.
    private static func models<Element, C: ChatCustomData>(
        _ page: ObjectPage<Element>, _ convert: (Element) throws(ModelValidationError) -> ChatMember<C>
    ) throws(WireError) -> ObjectPage<ChatMember<C>> {
        var members: [ChatMember<C>] = []
        var skipped = page.skipped
        for element in page.data {
            do {
                members.append(try convert(element))
            } catch {
                skipped.append("\(error)")
            }
        }
        return ObjectPage(data: members, totalCount: page.totalCount, next: page.next, prev: page.prev, skipped: skipped)
    }

    public func user<C: CustomData>(id: String, as custom: C.Type) async throws(WireError) -> ChatUser<C>? {
        do {
            return try await client.appContext.getUser(id: id, as: C.self)
        } catch {
            if Self.isNotFound(error) { return nil }
            throw error
        }
    }

    public func channel<C: CustomData>(id: String, as custom: C.Type) async throws(WireError) -> ChatChannel<C>? {
        do {
            return try await client.appContext.getChannel(id: id, as: C.self)
        } catch {
            if Self.isNotFound(error) { return nil }
            throw error
        }
    }

    static func isNotFound(_ error: WireError) -> Bool {
        guard case .service(let service) = error else { return false }
        return service.status == 404
    }

    public func events(in envelope: SubscribeEnvelope) -> [ObjectEvent]? {
        guard case .appContext(let event) = envelope.event else { return nil }
        switch event {
        case .userSet(let id, let fields, let updated, let eTag):
            return [.userSet(id: id, fields: fields, updated: updated, eTag: eTag, complete: false)]
        case .userRemoved(let id):
            return [.userRemoved(id: id)]
        case .channelSet(let id, let fields, let updated, let eTag):
            return [.channelSet(id: id, fields: fields, updated: updated, eTag: eTag, complete: false)]
        case .channelRemoved(let id):
            return [.channelRemoved(id: id)]
        case .membershipSet(let channel, let user, let fields, let updated, let eTag):
            return [.membershipSet(channel: channel, user: user, fields: fields, updated: updated, eTag: eTag)]
        case .membershipRemoved(let channel, let user):
            return [.membershipRemoved(channel: channel, user: user)]
        }
    }
}

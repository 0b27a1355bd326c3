import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

// DataSync's writes (`docs/datasync.md`, "Writes"): an edit is a JSON Patch of the changed fields,
// with `If-Match` when the outbox holds the server's version; a new user or channel is a create,
// and a create that meets the record (a resend whose answer was lost, another device's create)
// settles as sent when the record holds the edit, else becomes a patch; a membership is named by
// its id (``DataSyncMapping/membershipId(channel:user:)``, or the id another client gave it,
// found by its pair), created with its user and channel when they are missing; a delete that
// meets nothing is done.
extension DataSyncBackend {
    /// The first request of `write` (the dry run shows it; ``write(_:)`` may send more).
    public func plannedRequest(for write: ObjectWrite) throws(WireError) -> WireRequest {
        let sync = client.dataSync
        switch write {
        case .setUser(let id, let fields, let precondition), .setChannel(let id, let fields, let precondition):
            let resource: DataSyncResource = if case .setUser = write { .users } else { .channels }
            if case .ifMatch(let eTag) = precondition {
                return try sync.patchRequest(resource, id: id, DataSyncMapping.patch(fields, current: nil), ifMatch: eTag)
            }
            return try sync.createRequest(resource, creation(resource, id: id, fields: fields))
        case .removeUser(let id, let precondition):
            return try sync.deleteRequest(.users, id: id, ifMatch: precondition.eTag)
        case .removeChannel(let id, let precondition):
            return try sync.deleteRequest(.channels, id: id, ifMatch: precondition.eTag)
        case .setMembership(let channel, let user, let fields, _, let precondition):
            return try sync.patchRequest(
                .memberships, id: try Self.derivedId(channel, user), DataSyncMapping.patch(fields, current: nil),
                ifMatch: precondition.eTag)
        case .removeMembership(let channel, let user, let precondition):
            return try sync.deleteRequest(.memberships, id: try Self.derivedId(channel, user), ifMatch: precondition.eTag)
        case .setMemberships(let user, let sets, _):
            guard let first = sets.first else { throw .invalidArgument("a batch of memberships needs one at least") }
            return try sync.patchRequest(
                .memberships, id: try Self.derivedId(first.channel, user), DataSyncMapping.patch(first.fields, current: nil))
        }
    }

    public func write(_ write: ObjectWrite) async throws(WireError) -> ObjectWritten {
        switch write {
        case .setUser(let id, let fields, let precondition):
            let row = try await setObject(.users, id: id, fields: fields, precondition: precondition)
            return .user(try Self.model(row) { try DataSyncMapping.user($0, as: JSONValue.self) })
        case .setChannel(let id, let fields, let precondition):
            let row = try await setObject(.channels, id: id, fields: fields, precondition: precondition)
            return .channel(try Self.model(row) { try DataSyncMapping.channel($0, as: JSONValue.self) })
        case .removeUser(let id, let precondition):
            try await remove(.users, id: id, ifMatch: precondition.eTag)
            return .removed
        case .removeChannel(let id, let precondition):
            try await remove(.channels, id: id, ifMatch: precondition.eTag)
            return .removed
        case .setMembership(let channel, let user, let fields, _, let precondition):
            let row = try await setMembership(channel: channel, user: user, fields: fields, ifMatch: precondition.eTag)
            return .membership(try Self.model(row) { try DataSyncMapping.membership($0, as: RawChatCustom.self) })
        case .removeMembership(let channel, let user, let precondition):
            let derived = try Self.derivedId(channel, user)
            do {
                try await client.dataSync.delete(.memberships, id: derived, ifMatch: precondition.eTag)
            } catch where Self.status(of: error) == 404 {
                // Another client's id for the pair, or already gone (a resend whose answer was lost).
                if let other = try await lookup(channel: channel, user: user), other.id != derived {
                    try await remove(.memberships, id: other.id, ifMatch: precondition.eTag)
                }
            }
            return .removed
        case .setMemberships(let user, let sets, let answering):
            // One PATCH per membership: DataSync has no batch of writes.
            let wanted = Set(answering)
            var written: [ChatMember<RawChatCustom>] = []
            for set in sets {
                let row = try await setMembership(channel: set.channel, user: user, fields: set.fields, ifMatch: nil)
                if wanted.contains(set.channel) {
                    written.append(try Self.model(row) { try DataSyncMapping.membership($0, as: RawChatCustom.self) })
                }
            }
            return .memberships(written)
        }
    }

    /// The HTTP status of a service error, if `error` is one.
    static func status(of error: WireError) -> Int? {
        if case .service(let service) = error { return service.status }
        return nil
    }

    /// A 412 for a conditional write whose record is gone or changed (`docs/datasync.md`: the
    /// conflict policies decide, as for a stale eTag).
    static func stale(_ operation: String, _ why: String) -> WireError {
        .service(ServiceError(operation: operation, status: 412, family: .dataSync, message: why))
    }

    static func derivedId(_ channel: String, _ user: String) throws(WireError) -> String {
        guard let id = DataSyncMapping.membershipId(channel: channel, user: user) else {
            throw .invalidArgument("the membership of \(user) in \(channel) cannot have a DataSync id (over 255 characters)")
        }
        return id
    }

    /// What a create of a user or channel sends.
    func creation(_ resource: DataSyncResource, id: String, fields: [String: JSONValue]) -> DataSyncObject {
        let type = resource == .users ? options.userClass : options.channelClass
        let builtIn = type.level == .global && (type.name == "User" || type.name == "Channel")
        return DataSyncObject(
            id: id, className: builtIn ? nil : type.name, classVersion: type.version, classLevel: builtIn ? nil : type.level,
            status: DataSyncMapping.status(fields), payload: DataSyncMapping.payload(fields))
    }

    /// Writes a user's or channel's fields (see the top of this file).
    func setObject(_ resource: DataSyncResource, id: String, fields: [String: JSONValue], precondition: ObjectPrecondition)
        async throws(WireError) -> DataSyncRow
    {
        let sync = client.dataSync
        if case .ifMatch(let eTag) = precondition {
            return try await patch(resource, id: id, fields: fields, ifMatch: eTag)
        }
        do {
            return try await sync.create(resource, creation(resource, id: id, fields: fields))
        } catch where Self.status(of: error) == 409 && precondition == .none {
            // It exists: a resend whose answer was lost (it holds the edit: sent once), or another
            // writer's record (the edit is applied to it, as App Context's set would).
            guard let current = try await sync.get(resource, id: id) else { throw error }
            if DataSyncMapping.holds(fields, in: current) { return current }
            return try await sync.patch(resource, id: id, DataSyncMapping.patch(fields, current: current))
        }
    }

    /// A patch of `fields`; one that fails on the record's shape (a payload or status the patch
    /// assumed) is rebuilt from the record once, when its eTag still matches.
    /// `missingIsStale`: a 404 under `If-Match` means the record was removed since the edit's base
    /// (a 412); false where the id is only a guess (a membership's derived id), so the caller can
    /// look for the record under another id.
    func patch(_ resource: DataSyncResource, id: String, fields: [String: JSONValue], ifMatch: String?, missingIsStale: Bool = true)
        async throws(WireError) -> DataSyncRow
    {
        let sync = client.dataSync
        do {
            return try await sync.patch(resource, id: id, DataSyncMapping.patch(fields, current: nil), ifMatch: ifMatch)
        } catch where Self.status(of: error) == 404 {
            guard ifMatch == nil || !missingIsStale else {
                throw Self.stale("patch\(resource.noun)", "the \(resource.noun) \(id) was removed or expired since the edit's base")
            }
            throw error
        } catch where Self.status(of: error) == 400 {
            guard let current = try await sync.get(resource, id: id) else { throw error }
            if let ifMatch, current.eTag != ifMatch { throw Self.stale("patch\(resource.noun)", "the \(resource.noun) \(id) changed") }
            return try await sync.patch(resource, id: id, DataSyncMapping.patch(fields, current: current), ifMatch: current.eTag)
        }
    }

    /// Deletes a record; one already gone is done.
    func remove(_ resource: DataSyncResource, id: String, ifMatch: String?) async throws(WireError) {
        do {
            try await client.dataSync.delete(resource, id: id, ifMatch: ifMatch)
        } catch where Self.status(of: error) == 404 {
            return
        }
    }

    /// The membership of `user` in `channel`, whatever its id, or nil.
    func lookup(channel: String, user: String) async throws(WireError) -> DataSyncRow? {
        var query = DataSyncListQuery()
        query.userId = user
        query.channelId = channel
        query.limit = 1
        return try await client.dataSync.list(.memberships, query).data.first
    }

    /// Writes a membership's fields: a patch of its record (pnreplicate's id, or another
    /// client's found by the pair), else a create (with its user and channel when missing).
    func setMembership(channel: String, user: String, fields: [String: JSONValue], ifMatch: String?) async throws(WireError)
        -> DataSyncRow
    {
        let derived = try Self.derivedId(channel, user)
        do {
            return try await patch(.memberships, id: derived, fields: fields, ifMatch: ifMatch, missingIsStale: false)
        } catch where Self.status(of: error) == 404 {
            if let other = try await lookup(channel: channel, user: user) {
                return try await patch(.memberships, id: other.id, fields: fields, ifMatch: ifMatch)
            }
            if ifMatch != nil { throw Self.stale("patchMembership", "the membership of \(user) in \(channel) was removed") }
            return try await createMembership(id: derived, channel: channel, user: user, fields: fields)
        }
    }

    /// Creates a membership; its user and channel are created bare when missing (a 409 there
    /// means they exist); a membership another device created meanwhile gets the edit instead.
    func createMembership(id: String, channel: String, user: String, fields: [String: JSONValue]) async throws(WireError)
        -> DataSyncRow
    {
        let sync = client.dataSync
        let object = DataSyncObject(
            id: id, className: options.membershipClass, classVersion: options.membershipClassVersion, channelId: channel, userId: user,
            status: DataSyncMapping.status(fields), payload: DataSyncMapping.payload(fields))
        do {
            do {
                return try await sync.create(.memberships, object)
            } catch where Self.status(of: error) == 404 {
                for (resource, end) in [(DataSyncResource.users, user), (.channels, channel)] {
                    do {
                        _ = try await sync.create(resource, creation(resource, id: end, fields: [:]))
                    } catch where Self.status(of: error) == 409 {}
                }
                return try await sync.create(.memberships, object)
            }
        } catch where Self.status(of: error) == 409 {
            guard let existing = try await lookup(channel: channel, user: user) else { throw error }
            if DataSyncMapping.holds(fields, in: existing) { return existing }
            return try await patch(.memberships, id: existing.id, fields: fields, ifMatch: nil)
        }
    }
}

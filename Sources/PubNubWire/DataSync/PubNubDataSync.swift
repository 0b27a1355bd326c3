import Foundation
import ReplicaModel

/// PubNub DataSync through a client (`client.dataSync`): users, channels, memberships, entities
/// and relationships under `/v1/datasync/subkeys/{subKey}/` (the protocol reference,
/// `reference/datasync.md`, §2-§10; `docs/datasync.md`).
///
/// A create is create-only (409 when the id, or a membership's channel and user, exists); a
/// replace overwrites every mutable field; a patch is an RFC 6902 JSON Patch, atomic, with `test`
/// operations. Replace, patch and delete take an optional `If-Match` eTag (412 when stale).
/// Errors come back as ``ServiceError`` with family ``ServiceError/Family/dataSync`` and their
/// `DS-` codes in ``ServiceError/codes`` (``DataSyncErrors``).
///
/// ```swift
/// let alice = try await client.dataSync.create(.users, DataSyncObject(id: "alice", payload: ["name": "Alice"]))
/// let renamed = try await client.dataSync.patch(.users, id: "alice",
///     [.add(JSONPointer(["payload", "name"]), "Alice B.")], ifMatch: alice.eTag)
/// var query = DataSyncListQuery()
/// query.userId = "alice"
/// let page = try await client.dataSync.list(.memberships, query)
/// ```
///
/// Every request needs a credential: a token (``PubNubConfiguration/authKey``) or, on a server,
/// the secret key. The token grants `get`, `create`, `update` (PUT and PATCH) and `delete` on
/// `users`, `channels` and `datasync:*` resources (``AccessNeed``).
///
/// ## Topics
///
/// ### Calls
///
/// - ``list(_:_:)``
/// - ``get(_:id:)``
/// - ``create(_:_:)``
/// - ``replace(_:id:_:ifMatch:)``
/// - ``patch(_:id:_:ifMatch:)``
/// - ``delete(_:id:ifMatch:)``
///
/// ### The requests and their answers
///
/// - ``listRequest(_:_:)``
/// - ``getRequest(_:id:)``
/// - ``createRequest(_:_:)``
/// - ``replaceRequest(_:id:_:ifMatch:)``
/// - ``patchRequest(_:id:_:ifMatch:)``
/// - ``deleteRequest(_:id:ifMatch:)``
/// - ``row(from:operation:)``
/// - ``page(from:operation:)``
public struct PubNubDataSync: PubNubService {
    /// The client that sends the requests.
    public let client: PubNubClient

    /// DataSync through `client`.
    public init(client: PubNubClient) { self.client = client }

    /// The content type of a PATCH body.
    public static let patchContentType = "application/json-patch+json"

    func request(
        _ method: HTTPMethod, _ resource: DataSyncResource, id: String?, query: [QueryItem] = [], body: JSONValue? = nil,
        contentType: String? = nil, ifMatch: String? = nil, operation: String
    ) throws(WireError) -> WireRequest {
        var path = ["v1", "datasync", "subkeys", client.configuration.subscribeKey, resource.rawValue]
        if let id {
            try DataSyncIdentifier.validate(id)
            path.append(id)
        }
        var headers: [String: String] = [:]
        var data: Data?
        if let body {
            data = try PubNubClient.json(body)
            headers["Content-Type"] = contentType ?? resource.contentType
        }
        if let ifMatch { headers["If-Match"] = ifMatch }
        return WireRequest(
            method: method, pathSegments: path, query: client.commonQuery() + query, headers: headers, body: data,
            operation: operation)
    }

    /// `GET /{resource}`: one page of a list.
    public func listRequest(_ resource: DataSyncResource, _ query: DataSyncListQuery = DataSyncListQuery()) throws(WireError)
        -> WireRequest
    {
        try request(.get, resource, id: nil, query: try query.items(for: resource), operation: "list\(resource.operationNoun)s")
    }

    /// `GET /{resource}/{id}`.
    public func getRequest(_ resource: DataSyncResource, id: String) throws(WireError) -> WireRequest {
        try request(.get, resource, id: id, operation: "get\(resource.operationNoun)")
    }

    /// `POST /{resource}` with `{"data":{…}}` (answered 201).
    public func createRequest(_ resource: DataSyncResource, _ object: DataSyncObject) throws(WireError) -> WireRequest {
        try request(.post, resource, id: nil, body: try object.body(for: resource, creating: true), operation: "create\(resource.operationNoun)")
    }

    /// `PUT /{resource}/{id}`: every mutable field replaced (a payload key left out is removed).
    public func replaceRequest(_ resource: DataSyncResource, id: String, _ object: DataSyncObject, ifMatch: String? = nil)
        throws(WireError) -> WireRequest
    {
        try request(
            .put, resource, id: id, body: try object.body(for: resource, creating: false), ifMatch: ifMatch,
            operation: "replace\(resource.operationNoun)")
    }

    /// `PATCH /{resource}/{id}` with a JSON Patch. An empty patch is refused before sending
    /// (``WireError/invalidArgument(_:)``), as PubNub's SDKs refuse it.
    public func patchRequest(_ resource: DataSyncResource, id: String, _ operations: [JSONPatchOperation], ifMatch: String? = nil)
        throws(WireError) -> WireRequest
    {
        guard !operations.isEmpty else { throw .invalidArgument("a JSON Patch needs at least one operation") }
        return try request(
            .patch, resource, id: id, body: .array(operations.map(\.json)), contentType: Self.patchContentType, ifMatch: ifMatch,
            operation: "patch\(resource.operationNoun)")
    }

    /// `DELETE /{resource}/{id}` (answered 200 with an empty body).
    public func deleteRequest(_ resource: DataSyncResource, id: String, ifMatch: String? = nil) throws(WireError) -> WireRequest {
        try request(.delete, resource, id: id, ifMatch: ifMatch, operation: "delete\(resource.operationNoun)")
    }

    /// The record of a get, create, replace or patch answer (`{"data":{…}}`).
    public static func row(from response: WireResponse, operation: String) throws(WireError) -> DataSyncRow {
        guard let json = JSONValue.parse(response.body), case .object(let object)? = json.objectValue?["data"] else {
            throw .decoding(operation: operation, status: response.status, message: "not {\"data\":{…}}")
        }
        do {
            return try DataSyncRow(object: object)
        } catch {
            throw .decoding(operation: operation, status: response.status, message: error.reason)
        }
    }

    /// The page of a list answer.
    public static func page(from response: WireResponse, operation: String) throws(WireError) -> DataSyncPage {
        guard let json = JSONValue.parse(response.body), case .object(let object) = json else {
            throw .decoding(operation: operation, status: response.status, message: "not a JSON object")
        }
        do {
            return try DataSyncPage(object: object)
        } catch {
            throw .decoding(operation: operation, status: response.status, message: error.reason)
        }
    }

    // MARK: Calls

    /// One page of `resource`.
    public func list(_ resource: DataSyncResource, _ query: DataSyncListQuery = DataSyncListQuery()) async throws(WireError)
        -> DataSyncPage
    {
        let request = try listRequest(resource, query)
        return try Self.page(from: try await client.perform(request), operation: request.operation)
    }

    /// One record, or nil when the server has none (404).
    public func get(_ resource: DataSyncResource, id: String) async throws(WireError) -> DataSyncRow? {
        let request = try getRequest(resource, id: id)
        do {
            return try Self.row(from: try await client.perform(request), operation: request.operation)
        } catch .service(let error) where error.status == 404 {
            return nil
        }
    }

    /// Creates a record; a 409 means it exists (its id, or a membership's pair).
    public func create(_ resource: DataSyncResource, _ object: DataSyncObject) async throws(WireError) -> DataSyncRow {
        let request = try createRequest(resource, object)
        return try Self.row(from: try await client.perform(request), operation: request.operation)
    }

    /// Replaces a record's mutable fields.
    public func replace(_ resource: DataSyncResource, id: String, _ object: DataSyncObject, ifMatch: String? = nil)
        async throws(WireError) -> DataSyncRow
    {
        let request = try replaceRequest(resource, id: id, object, ifMatch: ifMatch)
        return try Self.row(from: try await client.perform(request), operation: request.operation)
    }

    /// Applies a JSON Patch to a record, atomically; a failed `test` is a 409 `DS-0302`
    /// (reason ``ServiceError/Reason/preconditionFailed``), a stale `ifMatch` a 412.
    public func patch(_ resource: DataSyncResource, id: String, _ operations: [JSONPatchOperation], ifMatch: String? = nil)
        async throws(WireError) -> DataSyncRow
    {
        let request = try patchRequest(resource, id: id, operations, ifMatch: ifMatch)
        return try Self.row(from: try await client.perform(request), operation: request.operation)
    }

    /// Deletes a record (a user's or channel's memberships go with it on the server).
    public func delete(_ resource: DataSyncResource, id: String, ifMatch: String? = nil) async throws(WireError) {
        _ = try await client.perform(try deleteRequest(resource, id: id, ifMatch: ifMatch))
    }
}

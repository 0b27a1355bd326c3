import Foundation
import ReplicaModel

/// PubNub File Sharing's limits (`docs/files.md`, "Limits").
public enum FileLimits {
    /// The largest upload PubNub's storage accepts: 5 MiB (5,242,880 bytes), the
    /// `content-length-range` of the upload policy. It applies to the bytes uploaded, so to the
    /// encrypted bytes when a cipher key is set (``PubNubFiles/uploadedSize(ofPlaintext:)``).
    public static let maxUploadBytes = 5_242_880
    /// The most files one list request returns (PubNub refuses a `limit` outside 1...100).
    public static let maxListLimit = 100
}

/// A file stored on a channel, as the list answer names it.
public struct RemoteFile: Sendable, Hashable, Codable {
    /// The file's id (the server's, given at upload).
    public var id: String
    /// The file's name.
    public var name: String
    /// Its size in bytes as stored (encrypted when it was uploaded encrypted).
    public var size: Int
    /// When it was uploaded (`created`), as the server wrote it.
    public var created: String?

    /// A file.
    public init(id: String, name: String, size: Int, created: String? = nil) {
        self.id = id
        self.name = name
        self.size = size
        self.created = created
    }
}

/// One page of a channel's files (`GET /v1/files/{sub}/channels/{ch}/files`).
public struct FileListPage: Sendable, Hashable {
    /// The files, as the server ordered them (oldest first).
    public var files: [RemoteFile]
    /// The cursor of the next page, nil on the last one.
    public var next: String?
}

/// Where and how to upload one file: the answer of `generate-upload-url`. The URL is a storage
/// URL on another origin, presigned: the upload sends only the form fields and the bytes, never
/// PubNub's keys.
public struct FileUploadTicket: Sendable, Hashable, Codable {
    /// One form field of the presigned POST, sent back unchanged and in order.
    public struct FormField: Sendable, Hashable, Codable {
        /// The field name.
        public var key: String
        /// The field value.
        public var value: String

        /// A field.
        public init(key: String, value: String) {
            self.key = key
            self.value = value
        }
    }

    /// The file's id, chosen by the server.
    public var id: String
    /// The file's name as the server echoed it (the publish step uses this one).
    public var name: String
    /// The absolute storage URL to POST to.
    public var url: String
    /// When the presigned upload stops being accepted, if the server said (about 60 s).
    public var expiration: Date?
    /// The presigned form fields, in the server's order.
    public var formFields: [FormField]

    /// A ticket.
    public init(id: String, name: String, url: String, expiration: Date?, formFields: [FormField]) {
        self.id = id
        self.name = name
        self.url = url
        self.expiration = expiration
        self.formFields = formFields
    }
}

/// A file message to publish (`/v1/files/publish-file/...`): the file's reference and an optional
/// message, `{"message": …, "file": {"id", "name", "size", "mime-type"}}`, encrypted as a whole when
/// a cipher key is set.
public struct PublishFileRequest: Sendable, Hashable {
    /// The channel.
    public var channel: String
    /// The uploaded file's id.
    public var fileId: String
    /// The uploaded file's name (the one `generate-upload-url` echoed).
    public var fileName: String
    /// The plaintext size, when known (the Swift SDK's payload carries it).
    public var size: Int?
    /// The MIME type, when known.
    public var mimeType: String?
    /// The message sent with the file, any JSON; nil sends none.
    public var message: JSONValue?
    /// Store in history (`store=1`/`0`). The Chat SDK sends its file events with `store=0`.
    public var store: Bool
    /// Per-message storage TTL in hours.
    public var ttl: Int?
    /// Publish metadata (a JSON object).
    public var meta: JSONValue?
    /// `custom_message_type`.
    public var customMessageType: String?

    /// A file message.
    public init(
        channel: String, fileId: String, fileName: String, size: Int? = nil, mimeType: String? = nil,
        message: JSONValue? = nil, store: Bool = true, ttl: Int? = nil, meta: JSONValue? = nil,
        customMessageType: String? = nil
    ) {
        self.channel = channel
        self.fileId = fileId
        self.fileName = fileName
        self.size = size
        self.mimeType = mimeType
        self.message = message
        self.store = store
        self.ttl = ttl
        self.meta = meta
        self.customMessageType = customMessageType
    }

    /// The payload, before encryption: `{"file": {...}, "message": ...}` (no `message` key when nil).
    public var payload: JSONValue {
        var file: [String: JSONValue] = ["id": .string(fileId), "name": .string(fileName)]
        if let size { file["size"] = .int(Int64(size)) }
        if let mimeType { file["mime-type"] = .string(mimeType) }
        var body: [String: JSONValue] = ["file": .object(file)]
        if let message { body["message"] = message }
        return .object(body)
    }
}

/// PubNub File Sharing through a client (`client.files`): list, upload (generate an upload URL,
/// the presigned form POST to storage, publish the file message), download and delete
/// (`docs/files.md`). The outbox's file sends use these steps; an app normally sends files
/// through `Replica.send(file:…)` and downloads them through its cache.
///
/// ```swift
/// let bytes = try await client.files.downloadFile(channel: "general", id: file.id, name: file.name)
/// ```
public struct PubNubFiles: PubNubService {
    /// The client whose keys, origin, transport and crypto module are used.
    public let client: PubNubClient

    /// File Sharing through `client`.
    public init(client: PubNubClient) { self.client = client }


    // MARK: Listing

    /// The list request of ``listFiles(channel:limit:next:)``.
    public func listFilesRequest(channel: String, limit: Int = FileLimits.maxListLimit, next: String? = nil) throws(WireError)
        -> WireRequest
    {
        guard (1...FileLimits.maxListLimit).contains(limit) else {
            throw .invalidArgument("listFiles: limit must be 1-\(FileLimits.maxListLimit), got \(limit)")
        }
        var query = client.commonQuery()
        query.append(QueryItem("limit", String(limit)))
        if let next { query.append(QueryItem("next", next)) }
        return WireRequest(
            method: .get, pathSegments: ["v1", "files", configuration.subscribeKey, "channels", channel, "files"],
            query: query, operation: "listFiles")
    }

    /// One page of the files stored on `channel`, oldest first. Listing is on demand: no sync
    /// lists files (`docs/files.md`).
    public func listFiles(channel: String, limit: Int = FileLimits.maxListLimit, next: String? = nil) async throws(WireError)
        -> FileListPage
    {
        let request = try listFilesRequest(channel: channel, limit: limit, next: next)
        let response = try await client.perform(request)
        guard let json = JSONValue.parse(response.body), let data = json.objectValue?["data"]?.arrayValue else {
            throw .decoding(operation: request.operation, status: response.status, message: "no data array")
        }
        var files: [RemoteFile] = []
        for item in data {
            guard let object = item.objectValue, let id = object["id"]?.stringValue, let name = object["name"]?.stringValue
            else { throw .decoding(operation: request.operation, status: response.status, message: "a file without id or name") }
            let size = object["size"].flatMap { value -> Int? in
                if case .int(let number) = value { return Int(exactly: number) }
                return nil
            }
            files.append(RemoteFile(id: id, name: name, size: size ?? 0, created: object["created"]?.stringValue))
        }
        let next = json.objectValue?["next"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        return FileListPage(files: files, next: next)
    }

    // MARK: Uploading

    /// The size of the bytes uploaded for a file of `count` plaintext bytes: `count` itself, or
    /// the ciphertext's size when a cipher key is set. Compare it with ``FileLimits/maxUploadBytes``
    /// before anything is sent.
    public func uploadedSize(ofPlaintext count: Int) -> Int {
        crypto?.encryptedSize(ofPlaintext: count) ?? count
    }

    /// The bytes a file uploads as: encrypted with the crypto module when there is one
    /// (`docs/files.md`, "Encryption"). Throws ``WireError/payloadTooLarge(operation:bytes:limit:)``
    /// over ``FileLimits/maxUploadBytes``, and refuses an empty file when encrypting (as the SDKs do).
    public func uploadBytes(for plaintext: Data) throws(WireError) -> Data {
        var bytes = plaintext
        if let crypto {
            do {
                bytes = try crypto.encrypt(plaintext)
            } catch {
                throw .invalidArgument("file: \(error)")
            }
        }
        guard bytes.count <= FileLimits.maxUploadBytes else {
            throw .payloadTooLarge(operation: "uploadFile", bytes: bytes.count, limit: FileLimits.maxUploadBytes)
        }
        return bytes
    }

    /// The request of ``generateUploadURL(channel:name:)``.
    public func generateUploadURLRequest(channel: String, name: String) throws(WireError) -> WireRequest {
        do {
            try Validation.validateFileName(name, own: true)
        } catch {
            throw .invalidArgument("\(error)")
        }
        let body = try PubNubClient.json(JSONValue.object(["name": .string(name)]))
        return WireRequest(
            method: .post, pathSegments: ["v1", "files", configuration.subscribeKey, "channels", channel, "generate-upload-url"],
            query: client.commonQuery(), headers: ["Content-Type": "application/json"], body: body, operation: "generateUploadURL")
    }

    /// Asks PubNub where to upload a file named `name`: the file's id and a presigned storage form.
    public func generateUploadURL(channel: String, name: String) async throws(WireError) -> FileUploadTicket {
        let request = try generateUploadURLRequest(channel: channel, name: name)
        return try Self.uploadTicket(from: try await client.perform(request))
    }

    /// Decodes a `generate-upload-url` answer.
    public static func uploadTicket(from response: WireResponse) throws(WireError) -> FileUploadTicket {
        let operation = "generateUploadURL"
        guard let json = JSONValue.parse(response.body)?.objectValue, let data = json["data"]?.objectValue,
              let id = data["id"]?.stringValue, let name = data["name"]?.stringValue,
              (try? Validation.validateFileId(id)) != nil, (try? Validation.validateFileName(name, own: false)) != nil,
              let form = json["file_upload_request"]?.objectValue, let url = form["url"]?.stringValue,
              let fields = form["form_fields"]?.arrayValue
        else {
            throw .decoding(operation: operation, status: response.status, message: "no valid data.id, data.name or file_upload_request")
        }
        var formFields: [FileUploadTicket.FormField] = []
        for field in fields {
            guard let key = field.objectValue?["key"]?.stringValue, let value = field.objectValue?["value"]?.stringValue else {
                throw .decoding(operation: operation, status: response.status, message: "a form field without key or value")
            }
            formFields.append(.init(key: key, value: value))
        }
        _ = try StorageURL(parsing: url, operation: operation)
        let expiration = form["expiration_date"]?.stringValue.flatMap { try? ISOTimestamp(parsing: $0) }?.date
        return FileUploadTicket(id: id, name: name, url: url, expiration: expiration, formFields: formFields)
    }

    /// The presigned upload of `bytes` (already ``uploadBytes(for:)``) as the storage expects it: a
    /// multipart form POST of the ticket's fields in order, then the part `file`; no query, no
    /// PubNub keys. Returns the request and the storage origin it goes to.
    public func uploadRequest(_ ticket: FileUploadTicket, bytes: Data, contentType: String) throws(WireError)
        -> (request: WireRequest, origin: Origin)
    {
        guard bytes.count <= FileLimits.maxUploadBytes else {
            throw .payloadTooLarge(operation: "uploadFile", bytes: bytes.count, limit: FileLimits.maxUploadBytes)
        }
        let target = try StorageURL(parsing: ticket.url, operation: "uploadFile")
        // RFC 2046: 1-70 characters; random, so the bytes cannot contain it by chance.
        let boundary = "pnreplicate-" + RandomIdentifier.uuidV4().replacingOccurrences(of: "-", with: "")
        var body = Data()
        func quoted(_ text: String) -> String {
            text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
                .replacingOccurrences(of: "\n", with: "%0A")
        }
        for field in ticket.formFields {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(field.key))\"\r\n\r\n".utf8))
            body.append(Data(field.value.utf8))
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(quoted(ticket.name))\"\r\n".utf8))
        body.append(Data("Content-Type: \(quoted(contentType))\r\n\r\n".utf8))
        body.append(bytes)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        var request = target.request(method: .post, operation: "uploadFile")
        request.headers = ["Content-Type": "multipart/form-data; boundary=\(boundary)"]
        request.body = body
        return (request, target.origin)
    }

    /// Uploads `bytes` (already ``uploadBytes(for:)``) with `ticket`. Storage answers 204 (any 2xx
    /// is accepted); its XML errors become ``ServiceError``s of family ``ServiceError/Family/storage``
    /// (an expired or refused presigned form is a 403).
    public func upload(_ ticket: FileUploadTicket, bytes: Data, contentType: String) async throws(WireError) {
        let (request, origin) = try uploadRequest(ticket, bytes: bytes, contentType: contentType)
        _ = try await performExternal(request, at: origin)
    }

    // MARK: Publishing

    /// The request of ``publishFile(_:)``: always a GET with the (encrypted) payload in the path,
    /// as every SDK sends it.
    public func publishFileRequest(_ publish: PublishFileRequest) throws(WireError) -> WireRequest {
        guard !configuration.publishKey.isEmpty else { throw .invalidConfiguration("publishKey is empty") }
        var payload = publish.payload
        if let crypto {
            do {
                payload = try crypto.encrypt(message: payload)
            } catch {
                throw .invalidArgument("publishFile: \(error)")
            }
        }
        let text = String(decoding: try PubNubClient.json(payload), as: UTF8.self)
        let size = Validation.publishedByteCount(message: payload, channel: publish.channel, meta: publish.meta)
        guard size <= Validation.maxPublishBytes else {
            throw .payloadTooLarge(operation: "publishFile", bytes: size, limit: Validation.maxPublishBytes)
        }
        var query = client.commonQuery()
        query.append(QueryItem("store", publish.store ? "1" : "0"))
        if let ttl = publish.ttl { query.append(QueryItem("ttl", String(ttl))) }
        if let meta = publish.meta { query.append(QueryItem("meta", String(decoding: try PubNubClient.json(meta), as: UTF8.self))) }
        if let type = publish.customMessageType { query.append(QueryItem("custom_message_type", type)) }
        return WireRequest(
            method: .get,
            pathSegments: ["v1", "files", "publish-file", configuration.publishKey, configuration.subscribeKey, "0",
                           publish.channel, "0", text],
            query: query, operation: "publishFile")
    }

    /// Publishes a file message and returns its timetoken. Only after the upload succeeded: no
    /// SDK publishes a file it could not upload.
    public func publishFile(_ publish: PublishFileRequest) async throws(WireError) -> Timetoken {
        try PubNubClient.publishTimetoken(from: try await client.perform(try publishFileRequest(publish)))
    }

    // MARK: Downloading and deleting

    /// The path of a file on PubNub (`/v1/files/{sub}/channels/{ch}/files/{id}/{name}`), which
    /// answers a download with a redirect to storage and a delete with the deletion. Throws
    /// ``WireError/invalidArgument(_:)`` for an id or name no path may carry (`..`, a `/`, a
    /// control character: ``Validation/validateFileId(_:field:)``), whoever gave it.
    func filePath(channel: String, id: String, name: String) throws(WireError) -> [String] {
        do {
            try Validation.validateFileId(id)
            try Validation.validateFileName(name, own: false)
        } catch {
            throw .invalidArgument("\(error)")
        }
        return uncheckedFilePath(channel: channel, id: id, name: name)
    }

    private func uncheckedFilePath(channel: String, id: String, name: String) -> [String] {
        ["v1", "files", configuration.subscribeKey, "channels", channel, "files", id, name]
    }

    /// The file's location on PubNub as a message or a store keeps it (a `files[].url`): the
    /// origin's download path with no `auth`, no signature and no user id. Fetching it needs the
    /// client's own query (``downloadFile(channel:id:name:)``).
    /// The id and name are not checked here (a dry run shows `{file-id}` in place of an id not
    /// known yet): the upload answer they come from is (``uploadTicket(from:)``).
    public func fileURL(channel: String, id: String, name: String) -> String {
        configuration.origin.url(for: WireRequest(method: .get, pathSegments: uncheckedFilePath(channel: channel, id: id, name: name), operation: "fileURL"))
    }

    /// The first request of a download: PubNub answers 307 with the presigned storage URL.
    public func fileLocationRequest(channel: String, id: String, name: String) throws(WireError) -> WireRequest {
        WireRequest(method: .get, pathSegments: try filePath(channel: channel, id: id, name: name), query: client.commonQuery(), operation: "fileLocation")
    }

    /// Downloads a file's bytes, decrypted when a cipher key is set: asks PubNub for the file's
    /// location (the 307's `Location`, read by hand: the one redirect pnreplicate follows, and
    /// only to fetch the file, with none of PubNub's keys), then GETs it from storage.
    public func downloadFile(channel: String, id: String, name: String) async throws(WireError) -> Data {
        try await download(channel: channel, id: id, name: name).bytes
    }

    /// A file downloaded: its bytes (decrypted when a cipher key is set) and the size it is stored
    /// with (the ciphertext's, when it was uploaded encrypted).
    public struct DownloadedFile: Sendable, Hashable {
        /// The bytes, decrypted with the client's crypto module when it has one.
        public var bytes: Data
        /// How many bytes storage held.
        public var storedSize: Int
    }

    /// Downloads a file as ``downloadFile(channel:id:name:)`` does, with the size it is stored
    /// with: a message's `size` may give either (the sender's plaintext, or what it uploaded).
    public func download(channel: String, id: String, name: String) async throws(WireError) -> DownloadedFile {
        let bytes = try await downloadStoredBytes(channel: channel, id: id, name: name)
        guard let crypto else { return DownloadedFile(bytes: bytes, storedSize: bytes.count) }
        do {
            return DownloadedFile(bytes: try crypto.decrypt(bytes), storedSize: bytes.count)
        } catch {
            throw .decoding(operation: "downloadFile", status: 200, message: "cannot decrypt the file: \(error)")
        }
    }

    /// The file's bytes as stored (encrypted when they were uploaded encrypted).
    public func downloadStoredBytes(channel: String, id: String, name: String) async throws(WireError) -> Data {
        // Sent by hand (the 307 is the answer), with the same Access Manager checks as `perform`.
        let location = try fileLocationRequest(channel: channel, id: id, name: name)
        let admission = try client.access.admit(location)
        let request = client.withToken(admission.token, location)
        let response: WireResponse
        do {
            response = try await client.transport.send(request, to: configuration.origin)
        } catch {
            throw .transport(error)
        }
        guard [301, 302, 303, 307, 308].contains(response.status) else {
            guard (200..<300).contains(response.status) else {
                let error = ErrorDecoding.serviceError(operation: request.operation, response: response)
                if response.status == 403 { throw client.access.refused(request, error: error, admission: admission) }
                throw .service(error)
            }
            throw .decoding(operation: request.operation, status: response.status, message: "expected a redirect to the file")
        }
        guard let location = response.header("location") else {
            throw .decoding(operation: request.operation, status: response.status, message: "a redirect without Location")
        }
        let target = try StorageURL(parsing: location, operation: "downloadFile")
        if configuration.origin.secure && !target.origin.secure {
            throw .decoding(operation: "downloadFile", status: response.status, message: "refused: the file's location is not https")
        }
        return try await performExternal(target.request(method: .get, operation: "downloadFile"), at: target.origin).body
    }

    /// The request of ``deleteFile(channel:id:name:)``.
    public func deleteFileRequest(channel: String, id: String, name: String) throws(WireError) -> WireRequest {
        WireRequest(method: .delete, pathSegments: try filePath(channel: channel, id: id, name: name), query: client.commonQuery(), operation: "deleteFile")
    }

    /// Deletes a file from the channel's storage (its file messages stay in history).
    public func deleteFile(channel: String, id: String, name: String) async throws(WireError) {
        _ = try await client.perform(try deleteFileRequest(channel: channel, id: id, name: name))
    }

    /// Sends a request to a storage origin: no redirect followed, a non-2xx is a
    /// ``ServiceError`` read from S3's XML error (or PubNub's JSON one).
    func performExternal(_ request: WireRequest, at origin: Origin) async throws(WireError) -> WireResponse {
        let response: WireResponse
        do {
            response = try await client.transport.send(request, to: origin)
        } catch {
            throw .transport(error)
        }
        guard (200..<300).contains(response.status) else {
            if (300..<400).contains(response.status) {
                throw .service(PubNubClient.refusedRedirect(operation: request.operation, response: response))
            }
            throw .service(ErrorDecoding.serviceError(operation: request.operation, response: response))
        }
        return response
    }
}

/// An absolute storage URL (an upload form's or a download's), split into the origin and a
/// request that carries only its own path and query.
struct StorageURL {
    var origin: Origin
    var pathSegments: [String]
    var query: [QueryItem]

    init(parsing text: String, operation: String) throws(WireError) {
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespaces)),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty, components.user == nil, components.password == nil
        else { throw .decoding(operation: operation, status: 0, message: "not an absolute http(s) URL") }
        origin = Origin(host: host, port: components.port, secure: scheme == "https")
        var segments: [String] = []
        let path = components.percentEncodedPath
        for raw in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            guard let segment = PercentEncoding.decode(String(raw)) else {
                throw .decoding(operation: operation, status: 0, message: "a malformed URL path")
            }
            segments.append(segment)
        }
        pathSegments = segments
        var items: [QueryItem] = []
        for pair in (components.percentEncodedQuery ?? "").split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(String(parts[0])) else {
                throw .decoding(operation: operation, status: 0, message: "a malformed URL query")
            }
            let value = parts.count == 2 ? PercentEncoding.decode(String(parts[1])) : nil
            if parts.count == 2, value == nil { throw .decoding(operation: operation, status: 0, message: "a malformed URL query") }
            items.append(QueryItem(name, value))
        }
        query = items
    }

    func request(method: HTTPMethod, operation: String) -> WireRequest {
        WireRequest(method: method, pathSegments: pathSegments, query: query, operation: operation)
    }
}

import Foundation
import PubNubWire
import ReplicaModel

/// The PubNub side of File Sharing: `/v1/files/{sub}/channels/{ch}/...` (list, generate an upload
/// form, the download redirect, delete). The publish of a file message is in `ServerHistory.swift`.
extension FileStorage {
    /// The most files one list page holds, and the default page.
    static let maxListLimit = 100

    /// Answers a `/v1/files/{sub}/...` request other than publish-file.
    mutating func api(_ request: WireRequest, now: Date) -> WireResponse {
        let s = request.pathSegments
        guard s.count >= 3 else { return Reply.notFound() }
        guard s[2] == subscribeKey else { return OrderedJSON.filesError(400, "Invalid Subkey", code: 3001) }
        guard s.count >= 6, s[3] == "channels" else { return Reply.notFound() }
        let channel = s[4]
        guard !channel.isEmpty else { return OrderedJSON.filesError(400, "[channel] contains invalid characters", code: 3001) }
        switch (request.method, s[5], s.count) {
        case (.get, "files", 6): return list(request, channel: channel)
        case (.post, "generate-upload-url", 6): return generateUploadURL(request, channel: channel, now: now)
        case (.get, "files", 8...):
            return location(channel: channel, id: s[6], name: s[7...].joined(separator: "/"), now: now)
        case (.delete, "files", 8...):
            return delete(channel: channel, id: s[6], name: s[7...].joined(separator: "/"))
        default: return Reply.notFound()
        }
    }

    /// `GET .../files`: the channel's uploaded files, oldest first, `limit` (1...100) at a time;
    /// `next` (an opaque cursor: the last sequence returned) only when more remain.
    func list(_ request: WireRequest, channel: String) -> WireResponse {
        var limit = Self.maxListLimit
        if let text = request.queryValue("limit") {
            guard let value = Int(text), (1...Self.maxListLimit).contains(value) else {
                return OrderedJSON.filesError(
                    400, "Invalid limit parameter. Limit must be an integer between 1 and 100 (inclusive).", code: 3001)
            }
            limit = value
        }
        var after: UInt64 = 0
        if let text = request.queryValue("next"), !text.isEmpty {
            guard text.hasPrefix("n"), let value = UInt64(text.dropFirst(), radix: 16) else {
                return OrderedJSON.filesError(400, "Invalid next parameter.", code: 3001)
            }
            after = value
        }
        let remaining = files(channel: channel).filter { $0.sequence > after }
        let page = remaining.prefix(limit)
        let items = page.map { object in
            OrderedJSON.object([
                ("name", OrderedJSON.string(object.file.name)), ("id", OrderedJSON.string(object.file.id)),
                ("size", String(object.file.size)), ("created", OrderedJSON.string(object.file.created)),
            ])
        }
        var members = [("status", "200"), ("data", "[" + items.joined(separator: ",") + "]")]
        if remaining.count > page.count, let last = page.last {
            members.append(("next", OrderedJSON.string("n" + String(last.sequence, radix: 16))))
        }
        members.append(("count", String(page.count)))
        return OrderedJSON.reply(200, OrderedJSON.object(members))
    }

    /// `POST .../generate-upload-url` with `{"name": ...}`: a fresh id and a presigned form, valid
    /// for ``uploadWindow`` on the server's clock.
    mutating func generateUploadURL(_ request: WireRequest, channel: String, now: Date) -> WireResponse {
        guard let name = Reply.bodyJSON(request)?.objectValue?["name"]?.stringValue, !name.isEmpty else {
            return OrderedJSON.filesError(400, "Invalid request body: [name] is required.", code: 3001)
        }
        let id = nextId()
        let key = objectKey(channel: channel, id: id, name: name)
        let expiration = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + Self.uploadWindow).rounded(.down))
        let date = Self.amzDate(now)
        let credential = "SIMULATOR/\(date.prefix(8))/us-east-1/s3/aws4_request"
        let policy = Data(OrderedJSON.object([
            ("expiration", OrderedJSON.string(Self.isoSeconds(expiration))),
            ("conditions", "[" + [
                OrderedJSON.object([("bucket", OrderedJSON.string("pubnub-simulator-files"))]),
                "[\"eq\",\"$key\",\(OrderedJSON.string(key))]",
                "[\"starts-with\",\"$Content-Type\",\"\"]",
                "[\"content-length-range\",0,\(Self.maxFileBytes)]",
                OrderedJSON.object([("x-amz-credential", OrderedJSON.string(credential))]),
                OrderedJSON.object([("x-amz-algorithm", OrderedJSON.string("AWS4-HMAC-SHA256"))]),
                OrderedJSON.object([("x-amz-date", OrderedJSON.string(date))]),
            ].joined(separator: ",") + "]"),
        ]).utf8).base64EncodedString()
        let fields: [FormField] = [
            .init(key: "tagging", value: "<Tagging><TagSet><Tag><Key>ObjectTTLInDays</Key><Value>1</Value></Tag></TagSet></Tagging>"),
            .init(key: "key", value: key),
            .init(key: "Content-Type", value: Self.contentType(forName: name)),
            .init(key: "X-Amz-Credential", value: credential),
            .init(key: "X-Amz-Security-Token", value: ""),
            .init(key: "X-Amz-Algorithm", value: "AWS4-HMAC-SHA256"),
            .init(key: "X-Amz-Date", value: date),
            .init(key: "Policy", value: policy),
            .init(key: "X-Amz-Signature", value: sign("upload", key, policy, credential, date)),
        ]
        remember(Ticket(channel: channel, id: id, name: name, expiration: expiration, fields: fields), key: key)
        let form = fields.map { OrderedJSON.object([("key", OrderedJSON.string($0.key)), ("value", OrderedJSON.string($0.value))]) }
        return OrderedJSON.reply(200, OrderedJSON.object([
            ("status", "200"),
            ("data", OrderedJSON.object([("id", OrderedJSON.string(id)), ("name", OrderedJSON.string(name))])),
            ("file_upload_request", OrderedJSON.object([
                ("url", OrderedJSON.string("\(origin)/\(Self.pathPrefix)/upload")),
                ("method", OrderedJSON.string("POST")),
                ("expiration_date", OrderedJSON.string(Self.isoSeconds(expiration))),
                ("form_fields", "[" + form.joined(separator: ",") + "]"),
            ])),
        ]))
    }

    /// `GET .../files/{id}/{name}`: 307 to a presigned storage URL, its `X-Amz-Date` the hour
    /// (rounded down), valid ``downloadExpires`` seconds from then; 404 for an unknown file.
    func location(channel: String, id: String, name: String, now: Date) -> WireResponse {
        let key = objectKey(channel: channel, id: id, name: name)
        guard objects[key] != nil else { return OrderedJSON.filesError(404, "File not found.") }
        return WireResponse(status: 307, headers: ["Location": downloadURL(key: key, now: now)], body: Data())
    }

    /// The presigned download URL of `key`; the query holds only `[A-Za-z0-9._-]` (the Python SDK
    /// sends the values back decoded, not encoded again).
    func downloadURL(key: String, now: Date) -> String {
        let hour = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
        let date = Self.amzDate(hour)
        let path = key.split(separator: "/", omittingEmptySubsequences: false).map { PercentEncoding.pathSegment(String($0)) }
            .joined(separator: "/")
        return "\(origin)/\(Self.pathPrefix)/object/\(path)?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=\(date)"
            + "&X-Amz-Expires=\(Self.downloadExpires)&X-Amz-Signature=\(sign("download", key, date, String(Self.downloadExpires)))"
    }

    /// `DELETE .../files/{id}/{name}`: removes the object (its file messages stay in history).
    /// When the channel has no such file, the id and name are looked up on every channel: the
    /// Kotlin Chat SDK sends the file id as the channel (`docs/simulator.md`, "Files").
    mutating func delete(channel: String, id: String, name: String) -> WireResponse {
        var key = objectKey(channel: channel, id: id, name: name)
        if objects[key] == nil, let other = objects.first(where: { $0.value.file.id == id && $0.value.file.name == name }) {
            key = other.key
        }
        guard objects.removeValue(forKey: key) != nil else { return OrderedJSON.filesError(404, "File not found.") }
        return OrderedJSON.reply(200, #"{"status":200}"#)
    }
}

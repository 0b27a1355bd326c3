import Foundation
import PubNubWire
import ReplicaModel

/// The storage side of File Sharing, S3-like: `POST {origin}/file-storage/upload` (a presigned
/// multipart form) and `GET {origin}/file-storage/object/{key}?X-Amz-...` (a presigned download).
/// Errors are S3's XML (``StorageReply``).
extension FileStorage {
    /// Answers a storage request (``isStorage(_:)``).
    mutating func storage(_ request: WireRequest, now: Date) -> WireResponse {
        let s = request.pathSegments
        switch (request.method, s.count > 1 ? s[1] : "") {
        case (.post, "upload") where s.count == 2: return upload(request, now: now)
        case (.get, "object") where s.count >= 3: return download(request, key: s[2...].joined(separator: "/"), now: now)
        default: return StorageReply.error(405, "MethodNotAllowed", "The specified method is not allowed against this resource.")
        }
    }

    /// A presigned form upload. Any query item is refused (clients send no PubNub keys to
    /// storage), then the form must be well formed, name a form this server handed out with
    /// every field unchanged (`Content-Type` aside, which clients may replace), be on time, and
    /// carry a file part of at most ``maxFileBytes``. Success is 204 with a `Location`; a second
    /// upload to the same key replaces the object, as S3 does.
    mutating func upload(_ request: WireRequest, now: Date) -> WireResponse {
        guard request.query.isEmpty else {
            return StorageReply.error(
                400, "AuthorizationQueryParametersError",
                "Query-string authentication is not supported with a POST form upload: send no query parameters.")
        }
        guard let type = request.headers["content-type"], let body = request.body,
              let form = MultipartForm(body: body, contentType: type)
        else {
            return StorageReply.error(400, "MalformedPOSTRequest", "The body of your POST request is not well-formed multipart/form-data.")
        }
        guard let key = form.field("key"), let ticket = tickets[key] else {
            return StorageReply.error(403, "AccessDenied", "Invalid according to Policy: Policy Condition failed: [\"eq\", \"$key\"]")
        }
        for field in ticket.fields where field.key != "Content-Type" && field.key != "key" {
            guard form.field(field.key) == field.value else {
                return field.key == "X-Amz-Signature" || field.key == "Policy"
                    ? StorageReply.error(403, "AccessDenied", "The request signature we calculated does not match the signature you provided.")
                    : StorageReply.error(403, "AccessDenied", "Invalid according to Policy: Policy Condition failed: \(field.key)")
            }
        }
        guard now <= ticket.expiration else {
            return StorageReply.error(403, "AccessDenied", "Invalid according to Policy: Policy expired.")
        }
        guard let file = form.part("file"), form.parts.filter({ $0.name == "file" }).count == 1 else {
            return StorageReply.error(400, "MalformedPOSTRequest", "POST requires exactly one file upload per request.")
        }
        guard file.body.count <= Self.maxFileBytes else {
            return StorageReply.error(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size")
        }
        let contentType = form.field("Content-Type") ?? file.contentType ?? "application/octet-stream"
        let stored = StoredFile(
            channel: ticket.channel, id: ticket.id, name: ticket.name, bytes: file.body, contentType: contentType,
            created: Self.isoSeconds(now))
        if var existing = objects[key] {
            existing.file = stored
            objects[key] = existing
        } else {
            sequence += 1
            objects[key] = Object(file: stored, sequence: sequence)
        }
        let path = key.split(separator: "/", omittingEmptySubsequences: false).map { PercentEncoding.pathSegment(String($0)) }
            .joined(separator: "/")
        return WireResponse(
            status: 204,
            headers: ["Location": "\(origin)/\(Self.pathPrefix)/object/\(path)", "ETag": "\"\(Self.digest(file.body))\""],
            body: Data())
    }

    /// A presigned download: exactly the four `X-Amz-*` items of ``downloadURL(key:now:)`` (any
    /// other item, a PubNub `uuid` or `auth` say, breaks the signature), on time; then the bytes,
    /// or 404 `NoSuchKey` for an object deleted since.
    func download(_ request: WireRequest, key: String, now: Date) -> WireResponse {
        let names = Set(request.query.map(\.name))
        let expected: Set = ["X-Amz-Algorithm", "X-Amz-Date", "X-Amz-Expires", "X-Amz-Signature"]
        guard names == expected, request.query.count == expected.count,
              request.queryValue("X-Amz-Algorithm") == "AWS4-HMAC-SHA256",
              let date = request.queryValue("X-Amz-Date"), let expires = request.queryValue("X-Amz-Expires"),
              request.queryValue("X-Amz-Signature") == sign("download", key, date, expires)
        else {
            return StorageReply.error(403, "AccessDenied", "The request signature we calculated does not match the signature you provided.")
        }
        guard let signed = Self.parseAmzDate(date), let seconds = Int(expires), (1...604_800).contains(seconds),
              now.timeIntervalSince(signed) <= Double(seconds)
        else { return StorageReply.error(403, "AccessDenied", "Request has expired") }
        guard let object = objects[key] else {
            return StorageReply.error(404, "NoSuchKey", "The specified key does not exist.")
        }
        return WireResponse(
            status: 200, headers: ["Content-Type": object.file.contentType, "ETag": "\"\(Self.digest(object.file.bytes))\""],
            body: object.file.bytes)
    }
}

/// S3's answers: the XML error body and the faults a storage request meets.
enum StorageReply {
    /// `<Error><Code>…</Code><Message>…</Message><RequestId/><HostId/></Error>`, `application/xml`.
    static func error(_ status: Int, _ code: String, _ message: String) -> WireResponse {
        let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(escaped(code))</Code><Message>\(escaped(message))"
            + "</Message><RequestId/><HostId/></Error>"
        return WireResponse(status: status, headers: ["Content-Type": "application/xml"], body: Data(body.utf8))
    }

    /// `text` with XML's special characters escaped.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// The answer of a fault that answers (5xx, 429, 403) in S3's shape, nil for the others: a
    /// 500 is `InternalError`, a 503 or a 429 is `SlowDown` (S3 has no 429), a 403 `AccessDenied`.
    static func fault(_ fault: Fault) -> WireResponse? {
        switch fault {
        case .serverError(503), .tooManyRequests:
            return error(503, "SlowDown", "Please reduce your request rate.")
        case .serverError(let status):
            return error(status, "InternalError", "We encountered an internal error. Please try again.")
        case .forbidden:
            return error(403, "AccessDenied", "Access Denied")
        default:
            return nil
        }
    }
}

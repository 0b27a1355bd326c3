import Foundation
import PubNubWire
import ReplicaModel

/// A file the simulator stores on a channel (``PubNubServer/storedFiles(channel:)``): the bytes as
/// they were uploaded, encrypted or not (the simulator never decrypts).
public struct StoredFile: Sendable, Hashable {
    /// The channel the file was uploaded to.
    public var channel: String
    /// The file's id (the server's, from `generate-upload-url`).
    public var id: String
    /// The file's name as the server echoed it.
    public var name: String
    /// The bytes as uploaded.
    public var bytes: Data
    /// The content type a download answers with (the form's `Content-Type` field).
    public var contentType: String
    /// When the upload completed, ISO-8601 UTC to the second (`2025-05-05T17:26:44Z`).
    public var created: String
    /// The size in bytes.
    public var size: Int { bytes.count }
}

/// PubNub File Sharing in the simulator: the files API under `/v1/files/...` and an S3-like storage
/// under ``pathPrefix`` on ``origin`` (presigned form uploads, presigned downloads), as
/// `docs/simulator.md` ("Files") describes.
///
/// A value the ``PubNubServer`` actor holds: the endpoints are in `FileEndpoints.swift` (the
/// PubNub side) and `StorageEndpoints.swift` (the storage side); the file message itself is a
/// publish (`ServerHistory.swift`). Ids and signatures are deterministic: they come from counters
/// and a fixed secret, so equal runs give equal answers.
struct FileStorage: Sendable {
    /// One upload form handed out by `generate-upload-url`, keyed by its object key.
    struct Ticket: Sendable, Hashable {
        var channel: String
        var id: String
        var name: String
        var expiration: Date
        /// The form fields in the order they were handed out.
        var fields: [FormField]

        func field(_ key: String) -> String? { fields.first { $0.key == key }?.value }
    }

    /// One field of an upload form.
    struct FormField: Sendable, Hashable {
        var key: String
        var value: String
    }

    /// An uploaded object: the file and its place in the channel's listing.
    struct Object: Sendable, Hashable {
        var file: StoredFile
        /// Upload order: the listing is oldest first, and `next` names the last sequence returned.
        var sequence: UInt64
    }

    /// The first path segment of every storage URL: storage shares the simulator's port over HTTP
    /// (and its transport in process), so the path tells storage requests apart.
    static let pathPrefix = "file-storage"
    /// The largest file part storage accepts: 5 MiB, the policy's `content-length-range`.
    static let maxFileBytes = 5 << 20
    /// How long an upload form is accepted after `generate-upload-url`.
    static let uploadWindow: TimeInterval = 60
    /// How long a download URL stays valid after its `X-Amz-Date` (PubNub's `X-Amz-Expires`).
    static let downloadExpires = 3900
    /// The most upload forms remembered; the oldest are forgotten beyond it.
    static let maxTickets = 100_000

    /// The subscribe key the files API answers for.
    let subscribeKey: String
    /// The storage origin (`scheme://host[:port]`) the upload and download URLs point to.
    var origin = "http://files.simulator.invalid"
    /// Upload forms by object key.
    var tickets: [String: Ticket] = [:]
    /// Object keys of ``tickets``, oldest first (to bound them).
    var ticketOrder: [String] = []
    /// Uploaded objects by object key.
    var objects: [String: Object] = [:]
    var idCounter: UInt64 = 0
    var sequence: UInt64 = 0

    init(subscribeKey: String) { self.subscribeKey = subscribeKey }

    /// Whether `request` is for storage (its path starts with ``pathPrefix``).
    static func isStorage(_ request: WireRequest) -> Bool { request.pathSegments.first == pathPrefix }

    /// The object key of a file: `{sub}/f-{channel digest}/{id}/{name}`, PubNub's layout.
    func objectKey(channel: String, id: String, name: String) -> String {
        "\(subscribeKey)/f-\(PubNubServer.fnv1a("channel|" + channel))/\(id)/\(name)"
    }

    /// A fresh file id, UUID-shaped, deterministic from a counter.
    mutating func nextId() -> String {
        idCounter += 1
        let hex: [Character] = Array(Self.hex16(PubNubServer.fnv1a("file-id|\(idCounter)")))
            + Array(Self.hex16(PubNubServer.fnv1a("\(idCounter)|file-id")))
        let groups: [String] = [
            String(hex[0..<8]), String(hex[8..<12]), "4" + String(hex[13..<16]), "a" + String(hex[17..<20]), String(hex[20..<32]),
        ]
        return groups.joined(separator: "-")
    }

    /// A 64-bit hex digest padded to 16 digits.
    static func hex16(_ text: String) -> String { String(repeating: "0", count: max(0, 16 - text.count)) + text }

    /// A keyed digest (64 hex digits) binding `parts`: the signatures of upload forms and
    /// download URLs. Not cryptography: the simulator only needs a tampered field to be refused.
    func sign(_ parts: String...) -> String {
        let text = "pn-simulator-storage|\(subscribeKey)|" + parts.joined(separator: "|")
        return (0..<4).map { Self.hex16(PubNubServer.fnv1a("\($0)|" + text)) }.joined()
    }

    /// Remembers an upload form, forgetting the oldest beyond ``maxTickets``.
    mutating func remember(_ ticket: Ticket, key: String) {
        if tickets.updateValue(ticket, forKey: key) == nil { ticketOrder.append(key) }
        if ticketOrder.count > Self.maxTickets {
            let dropped = ticketOrder.removeFirst()
            tickets[dropped] = nil
        }
    }

    /// The uploaded files of `channel`, oldest first.
    func files(channel: String) -> [Object] {
        objects.values.filter { $0.file.channel == channel }.sorted { $0.sequence < $1.sequence }
    }

    /// Every uploaded file, by channel, each channel's oldest first.
    func allFiles() -> [String: [StoredFile]] {
        Dictionary(grouping: objects.values.sorted { $0.sequence < $1.sequence }.map(\.file), by: \.channel)
    }

    /// Upload forms handed out whose object was never uploaded.
    var pendingUploads: Int { tickets.keys.filter { objects[$0] == nil }.count }

    /// The state as text, for ``PubNubServer/stateDigest()``.
    var digestText: String {
        var text = "files:\(idCounter),\(sequence),\(pendingUploads);"
        for key in objects.keys.sorted() {
            guard let object = objects[key] else { continue }
            text += "\(key),\(object.sequence),\(object.file.contentType),\(Self.digest(object.file.bytes));"
        }
        return text
    }

    /// FNV-1a of bytes, as hex.
    static func digest(_ bytes: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }

    /// `date` as ISO-8601 UTC to the second, `2025-05-05T17:27:45Z`.
    static func isoSeconds(_ date: Date) -> String {
        let floored = Date(timeIntervalSince1970: (date.timeIntervalSince1970).rounded(.down))
        return ISOTimestamp(date: floored, fractionDigits: 0).description
    }

    /// `date` in S3's compact form, `20250505T172745Z`.
    static func amzDate(_ date: Date) -> String {
        isoSeconds(date).filter { $0 != "-" && $0 != ":" }
    }

    /// Parses S3's compact date (`20250505T172745Z`); nil for anything else.
    static func parseAmzDate(_ text: String) -> Date? {
        let c = Array(text)
        guard c.count == 16, c[8] == "T", c[15] == "Z" else { return nil }
        // Joined from parts, not one `+` chain: the chain took the debug type checker 37 s.
        let date: [String] = [String(c[0..<4]), String(c[4..<6]), String(c[6..<8])]
        let time: [String] = [String(c[9..<11]), String(c[11..<13]), String(c[13..<15])]
        let iso: String = date.joined(separator: "-") + "T" + time.joined(separator: ":") + "Z"
        return (try? ISOTimestamp(parsing: iso))?.date
    }

    /// A content type for a file name's extension (S3's form carries one; PubNub guesses it).
    static func contentType(forName name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "txt": return "text/plain; charset=utf-8"
        case "json": return "application/json"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "pdf": return "application/pdf"
        default: return "application/octet-stream"
        }
    }
}

/// JSON written in a fixed key order, as PubNub's files service writes it (the recorded answers'
/// order), for answers whose bytes tests compare.
enum OrderedJSON {
    /// A JSON string literal.
    static func string(_ text: String) -> String { (try? JSONValue.string(text).jsonString()) ?? "\"\"" }

    /// An object of already written values, in the given order.
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// An answer with this JSON text.
    static func reply(_ status: Int, _ text: String, headers: [String: String] = [:]) -> WireResponse {
        var all = headers
        all["Content-Type"] = Reply.json
        return WireResponse(status: status, headers: all, body: Data(text.utf8))
    }

    /// The files service's error envelope:
    /// `{"status":400,"error":{"source":"Files","message":"...","code":3001}}` (code when given).
    static func filesError(_ status: Int, _ message: String, code: Int? = nil) -> WireResponse {
        var error = [("source", string("Files")), ("message", string(message))]
        if let code { error.append(("code", String(code))) }
        return reply(status, object([("status", String(status)), ("error", object(error))]))
    }
}

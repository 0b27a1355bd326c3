import Foundation

/// A file attached to a message (`docs/files.md`): what a file message (`message_type` 4, a
/// subscribe event `e: 4`) or a Chat SDK text message's `files` names.
///
/// The bytes are not here: they are on PubNub's storage until downloaded on demand
/// (`Replica.downloadFile`), then in the store's bounded cache.
///
/// ```swift
/// for file in message.files { print(file.name, file.size ?? 0, file.mimeType ?? "?") }
/// ```
public struct ChatFile: Codable, Hashable, Sendable {
    /// The server's file id; nil while this device has not uploaded it yet.
    public var id: String?
    /// The file name.
    public var name: String
    /// The size in bytes when known (the sender's plaintext size).
    public var size: Int?
    /// The MIME type when known (the Chat SDK's `type`, the Swift SDK's `mime-type`).
    public var mimeType: String?
    /// Where the file is on PubNub, without keys (the Chat SDK's `url`): the download path that
    /// answers with a redirect to storage. Informative; downloads are made from the id and name.
    public var url: String?

    /// A file.
    public init(id: String?, name: String, size: Int? = nil, mimeType: String? = nil, url: String? = nil) {
        self.id = id
        self.name = name
        self.size = size
        self.mimeType = mimeType
        self.url = url
    }

    /// The `message_type` (history) and `e` (subscribe) of a file message.
    public static let fileMessageType = 4

    /// What a server message carries: the body to read as the message (a file message's inner
    /// `message`, JSON null when it has none; any other message's whole payload) and its files
    /// (a file message's `file`; a Chat SDK text body's `files`). Entries without a string id and
    /// name are left out, and at most ``maxFilesPerMessage`` are read: a peer's payload cannot
    /// make a message carry anything else.
    public static func split(payload: JSONValue, messageType: Int?) -> (body: JSONValue, files: [ChatFile]) {
        if messageType == fileMessageType {
            guard case .object(let object) = payload else { return (payload, []) }
            let file = object["file"].flatMap { ChatFile(wire: $0) }
            return (object["message"] ?? .null, file.map { [$0] } ?? [])
        }
        guard case .object(let object) = payload, case .array(let list)? = object["files"] else { return (payload, []) }
        return (payload, list.prefix(maxFilesPerMessage).compactMap { ChatFile(wire: $0) })
    }

    /// The most files one message is read with (the Chat SDK sends a handful).
    public static let maxFilesPerMessage = 32

    /// A file from its wire form: `{"id","name"}` plus the optional `size`, `type` or
    /// `mime-type`, and `url`. Nil when the id or the name is not one a request may carry
    /// (`Validation.validateFileId(_:field:)`, `Validation.validateFileName(_:own:field:)`):
    /// a peer's `..` never reaches a download or delete path.
    public init?(wire: JSONValue) {
        guard case .object(let object) = wire, case .string(let id)? = object["id"], case .string(let name)? = object["name"],
              (try? Validation.validateFileId(id)) != nil, (try? Validation.validateFileName(name, own: false)) != nil
        else { return nil }
        self.id = id
        self.name = name
        if case .int(let size)? = object["size"], size >= 0 { self.size = Int(exactly: size) }
        mimeType = (object["type"] ?? object["mime-type"])?.stringValue.flatMap { $0.utf8.count <= 255 ? $0 : nil }
        url = object["url"]?.stringValue.flatMap { $0.utf8.count <= 2048 ? $0 : nil }
    }

    /// The Chat SDK's form of the file in a text message's `files`: `{"name","id","url","type"}`.
    public var chatSDKValue: JSONValue {
        var object: [String: JSONValue] = ["name": .string(name)]
        if let id { object["id"] = .string(id) }
        if let url { object["url"] = .string(url) }
        if let mimeType { object["type"] = .string(mimeType) }
        return .object(object)
    }

    /// A MIME type guessed from a file name's extension (`application/octet-stream` when unknown),
    /// for uploads whose caller names none.
    public static func mimeType(forName name: String) -> String {
        let ext = (name as NSString).pathExtension.lowercased()
        return [
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
            "heic": "image/heic", "txt": "text/plain", "json": "application/json", "pdf": "application/pdf",
            "mp4": "video/mp4", "mov": "video/quicktime", "mp3": "audio/mpeg", "m4a": "audio/mp4", "zip": "application/zip",
        ][ext] ?? "application/octet-stream"
    }
}

/// A file attached to a draft: its bytes are already in the store's attachment area (copied when
/// it was attached), under `localName`; sending the draft uploads them (`docs/files.md`, "Drafts").
public struct DraftFile: Codable, Hashable, Sendable {
    /// The name it is sent under.
    public var name: String
    /// Its MIME type.
    public var mimeType: String
    /// Its size in bytes.
    public var size: Int
    /// The copy's name in the attachment area's `outgoing` folder.
    public var localName: String

    /// A draft's file.
    public init(name: String, mimeType: String, size: Int, localName: String) {
        self.name = name
        self.mimeType = mimeType
        self.size = size
        self.localName = localName
    }
}

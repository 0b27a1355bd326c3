import Foundation

/// A value that breaks one of PubNub's limits. Every case names the offending field.
public enum ModelValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An id is empty.
    case emptyIdentifier(field: String)
    /// An id is longer than `Validation.maxIdentifierBytes` UTF-8 bytes.
    case identifierTooLong(field: String, bytes: Int, limit: Int)
    /// An id contains a character PubNub forbids (`, / \ * :` or a control character).
    case forbiddenCharacter(field: String, character: String)
    /// A message's text is larger than `Validation.maxMessageTextBytes` once JSON-encoded.
    case messageTooLarge(field: String, bytes: Int, limit: Int)
    /// `custom` holds an object or array; PubNub allows only flat scalars.
    case nestedCustomValue(field: String, key: String)
    /// A value is required but missing or empty.
    case missingValue(field: String)
    /// An id that a URL would rewrite: `.` or `..` (a path segment that URL normalisation removes,
    /// sending the request to another endpoint).
    case reservedIdentifier(field: String, id: String)
    /// A `custom_message_type` that is not 3-50 characters of `A-Z a-z 0-9 - _`.
    case invalidCustomMessageType(String)

    /// The field the error is about.
    public var field: String {
        switch self {
        case .emptyIdentifier(let field), .identifierTooLong(let field, _, _), .forbiddenCharacter(let field, _),
            .messageTooLarge(let field, _, _), .nestedCustomValue(let field, _), .missingValue(let field),
            .reservedIdentifier(let field, _):
            field
        case .invalidCustomMessageType: "customMessageType"
        }
    }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .invalidCustomMessageType(let type):
            "customMessageType: \"\(type)\" must be 3-50 characters of A-Z a-z 0-9 - _"
        case .emptyIdentifier(let field):
            "\(field): an id must not be empty"
        case .identifierTooLong(let field, let bytes, let limit):
            "\(field): id is \(bytes) UTF-8 bytes, the limit is \(limit)"
        case .forbiddenCharacter(let field, let character):
            "\(field): id contains the forbidden character \(character)"
        case .messageTooLarge(let field, let bytes, let limit):
            "\(field): message is \(bytes) bytes encoded, the limit is \(limit)"
        case .nestedCustomValue(let field, let key):
            "\(field): key \"\(key)\" holds an object or array; custom data must be flat scalars"
        case .missingValue(let field):
            "\(field): a value is required"
        case .reservedIdentifier(let field, let id):
            "\(field): the id \"\(id)\" is not allowed (a URL would drop it as a path segment)"
        }
    }
}

/// PubNub's limits on ids and messages.
public enum Validation {
    /// Longest id, in UTF-8 bytes.
    public static let maxIdentifierBytes = 92
    /// Largest message text, in bytes once JSON-encoded (32 KiB).
    public static let maxMessageTextBytes = 32 * 1024

    /// Checks a message's own id (the `id` in its payload): not empty, and without U+0000, which
    /// the store could not keep (SQLite text reads back cut at a NUL, so the row would come back
    /// with another id). Message ids are the app's, so PubNub's id rules do not apply otherwise.
    public static func validateMessageId(_ id: String, field: String = "message.id") throws(ModelValidationError) {
        if id.isEmpty { throw .emptyIdentifier(field: field) }
        if id.unicodeScalars.contains("\u{0}") { throw .forbiddenCharacter(field: field, character: "U+0") }
    }

    /// Checks a user, channel or other object id **this device writes** (the outbox, the CLI's
    /// flags): non-empty, not `.` or `..`, at most 92 UTF-8 bytes, no `, / \ * :` and no control
    /// characters, as PubNub documents its ids.
    ///
    /// `.` and `..` are refused because ids travel as URL path segments: URL normalisation removes
    /// them, so `/v2/objects/KEY/uuids/..` would reach `/v2/objects/KEY` instead. Ids that come
    /// from a server are checked with the looser ``validateStoredIdentifier(_:field:)``.
    public static func validateIdentifier(_ id: String, field: String) throws(ModelValidationError) {
        // The 92-byte limit binds every id this device makes, derived ones (a thread's channel)
        // included, before the looser rule of ids the server gave.
        let bytes = id.utf8.count
        if bytes > maxIdentifierBytes {
            throw .identifierTooLong(field: field, bytes: bytes, limit: maxIdentifierBytes)
        }
        try validateStoredIdentifier(id, field: field)
        for scalar in id.unicodeScalars {
            switch scalar.value {
            case 0x2C, 0x2F, 0x5C, 0x2A, 0x3A:  // , / \ * :
                throw .forbiddenCharacter(field: field, character: "'\(scalar)'")
            default:
                continue
            }
        }
    }

    /// Checks an id as the model and the store keep it, whoever wrote it: non-empty, not `.` or
    /// `..` (a URL would drop them as path segments), at most 92 UTF-8 bytes, no `,` (PubNub's
    /// paths list channels with it, so such an id would name several) and no control characters.
    /// The real service accepts ids that PubNub's documented rules
    /// (``validateIdentifier(_:field:)``) refuse (a membership of `channel|encoded::1` was
    /// recorded from it): such ids are stored as given, and only this device's own writes are
    /// held to the stricter rule.
    ///
    /// An id the Chat SDK derives from another is accepted over 92 bytes when its parts are
    /// within the limit: a thread channel `PUBNUB_INTERNAL_THREAD_<channel>_<timetoken>` of a
    /// channel of up to 92 bytes (the Chat SDK makes one for any message it can reply to).
    /// ``validateIdentifier(_:field:)`` still refuses to make one.
    public static func validateStoredIdentifier(_ id: String, field: String) throws(ModelValidationError) {
        if id.isEmpty { throw .emptyIdentifier(field: field) }
        if id == "." || id == ".." { throw .reservedIdentifier(field: field, id: id) }
        let bytes = id.utf8.count
        if bytes > maxIdentifierBytes {
            let parent = ChatSDKFormat.threadParent(ofChannel: id)
            guard let parent, parent.utf8.count <= maxIdentifierBytes, ChatSDKFormat.threadParent(ofChannel: parent) == nil else {
                throw .identifierTooLong(field: field, bytes: bytes, limit: maxIdentifierBytes)
            }
        }
        for scalar in id.unicodeScalars {
            switch scalar.value {
            case 0x2C:  // ,
                throw .forbiddenCharacter(field: field, character: "','")
            case 0x00...0x1F, 0x7F...0x9F:  // the C0 and C1 control characters (Unicode category Cc)
                throw .forbiddenCharacter(
                    field: field, character: "U+" + String(scalar.value, radix: 16, uppercase: true))
            default:
                continue
            }
        }
    }

    /// Longest file id read from a server or a flag, in UTF-8 bytes (PubNub's are 36-character UUIDs).
    public static let maxFileIdBytes = 128
    /// Longest file name this device uploads, in UTF-8 bytes.
    public static let maxFileNameBytes = 255
    /// Longest file name read from a server (another client's upload), in UTF-8 bytes.
    public static let maxStoredFileNameBytes = 1024
    /// Longest push device token, in UTF-8 bytes (FCM's are about 160, APNs' 64 hex digits).
    public static let maxDeviceTokenBytes = 4096

    /// Checks a file id, whoever gave it (a message's `file`/`files`, an upload answer, `--id`;
    /// a listing's ids are shown as they are and checked when a request would carry them): non-empty, at most ``maxFileIdBytes``, and a safe URL path segment with
    /// no control character (``validatePathSegment(_:field:limit:controlCharacters:)``). A file id travels in the download and delete paths
    /// (`/v1/files/…/files/{id}/{name}`), so an id of `..` would send them to another endpoint.
    public static func validateFileId(_ id: String, field: String = "file.id") throws(ModelValidationError) {
        try validatePathSegment(id, field: field, limit: maxFileIdBytes)
    }

    /// Checks a file name: non-empty, a safe URL path segment (``validatePathSegment(_:field:limit:controlCharacters:)``),
    /// at most ``maxFileNameBytes`` when this device uploads it (`own`, which may hold no control
    /// character), else ``maxStoredFileNameBytes`` (another client's, read from a message, a
    /// listing or a flag). Another client's name may hold control characters but U+0000 (the
    /// store could not keep it): percent-encoded in a path they are harmless, and a name with a
    /// terminal escape must stay addressable (`files delete` of a peer's spam); every table prints
    /// it escaped.
    public static func validateFileName(_ name: String, own: Bool, field: String = "file.name") throws(ModelValidationError) {
        try validatePathSegment(name, field: field, limit: own ? maxFileNameBytes : maxStoredFileNameBytes, controlCharacters: !own)
        if name.unicodeScalars.contains("\u{0}") { throw .forbiddenCharacter(field: field, character: "U+0") }
    }

    /// Checks a push device token (`push add --device-token`, `PushDevice`): non-empty, a safe
    /// URL path segment with no control character (``validatePathSegment(_:field:limit:controlCharacters:)``;
    /// the token is the last segment of every push path), at most ``maxDeviceTokenBytes``.
    public static func validateDeviceToken(_ token: String, field: String = "device token") throws(ModelValidationError) {
        try validatePathSegment(token, field: field, limit: maxDeviceTokenBytes)
    }

    /// The rule every value that becomes one URL path segment meets, beyond its own length limit:
    /// not empty, not `.` or `..` (URL normalisation removes them), no `/` (two segments once a
    /// server decodes it), and unless `controlCharacters`, no control characters (C0, DEL, C1).
    public static func validatePathSegment(
        _ value: String, field: String, limit: Int, controlCharacters: Bool = false
    ) throws(ModelValidationError) {
        if value.isEmpty { throw .emptyIdentifier(field: field) }
        if value == "." || value == ".." { throw .reservedIdentifier(field: field, id: value) }
        let bytes = value.utf8.count
        if bytes > limit { throw .identifierTooLong(field: field, bytes: bytes, limit: limit) }
        for scalar in value.unicodeScalars {
            switch scalar.value {
            case 0x2F:  // /
                throw .forbiddenCharacter(field: field, character: "'/'")
            case 0x00...0x1F where !controlCharacters, 0x7F...0x9F where !controlCharacters:
                throw .forbiddenCharacter(field: field, character: "U+" + String(scalar.value, radix: 16, uppercase: true))
            default:
                continue
            }
        }
    }

    /// Checks a `custom_message_type` as PubNub accepts it: 3-50 characters of `A-Z a-z 0-9 - _`.
    public static func validateCustomMessageType(_ type: String) throws(ModelValidationError) {
        let allowed = type.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "-", "_": true
            default: false
            }
        }
        guard allowed, (3...50).contains(type.unicodeScalars.count) else { throw .invalidCustomMessageType(type) }
    }

    /// Checks that a message text is at most 32 KiB once encoded as a JSON string.
    public static func validateMessageText(_ text: String, field: String = "text") throws(ModelValidationError) {
        let bytes = jsonEncodedByteCount(text)
        if bytes > maxMessageTextBytes {
            throw .messageTooLarge(field: field, bytes: bytes, limit: maxMessageTextBytes)
        }
    }

    /// The size of `text` written as a JSON string literal, quotes and escapes included.
    static func jsonEncodedByteCount(_ text: String) -> Int {
        var count = 2
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x0C, 0x0A, 0x0D, 0x09: count += 2
            case 0..<0x20: count += 6
            default: count += 1
            }
        }
        return count
    }
}

extension Validation {
    /// Largest publish PubNub accepts, in bytes (32 KiB), counted by ``publishedByteCount(message:channel:meta:)``.
    public static let maxPublishBytes = 32 * 1024

    /// Checks that a publish fits PubNub's 32 KiB limit, counted as
    /// ``publishedByteCount(message:channel:meta:)`` does, so that an oversized message is refused
    /// before it is stored instead of dead-lettering later with `413 Message Too Large`.
    public static func validatePublishSize(
        message: JSONValue, channel: String, meta: JSONValue?, field: String = "message"
    ) throws(ModelValidationError) {
        let bytes = publishedByteCount(message: message, channel: channel, meta: meta)
        if bytes > maxPublishBytes {
            throw .messageTooLarge(field: field, bytes: bytes, limit: maxPublishBytes)
        }
    }

    /// The size PubNub's limit is checked against: the message as compact JSON with sorted keys
    /// (exactly the POST body the publish sends), plus the channel and the `meta` JSON as
    /// percent-encoded in the URL (``PercentEncoding``: the channel as a path segment, `meta` as a
    /// query value, as the wire client writes them).
    ///
    /// PubNub measures "the URL-encoded GET path or the POST body"; its documentation also counts
    /// the channel name. Counting the body, the channel and `meta` together is the union of those
    /// readings: it can refuse a message a few hundred bytes short of what PubNub would take
    /// (the channel is at most 92 bytes, the outbox's `meta` about 60), never accept one PubNub
    /// refuses. A value that cannot be encoded as JSON counts as its channel and meta only (the
    /// publish fails to encode it at send time, with its own error).
    public static func publishedByteCount(message: JSONValue, channel: String, meta: JSONValue?) -> Int {
        let body = (try? message.jsonData())?.count ?? 0
        let metaBytes = meta.flatMap { try? $0.jsonData() }.map(PercentEncoding.queryComponentLength) ?? 0
        return body + PercentEncoding.pathSegmentLength(channel) + metaBytes
    }
}

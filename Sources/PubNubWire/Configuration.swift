import Foundation

/// How to reach PubNub, with PubNub's own names. Secret values never appear in `description`.
public struct PubNubConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The publish key (`pub-c-...`).
    public var publishKey: String
    /// The subscribe key (`sub-c-...`).
    public var subscribeKey: String
    /// This client's user id (`uuid` on the wire).
    public var userId: String
    /// Where requests go; `ps.pndsn.com` over https by default.
    public var origin: Origin
    /// Access Manager auth key or token, sent as `auth`.
    public var authKey: String?
    /// This library's version (`pnsdk` carries it; a diagnostics report names it).
    public static let libraryVersion = "0.1"
    /// The `pnsdk` value sent with every request.
    public var sdkName = "pnreplicate/" + PubNubConfiguration.libraryVersion

    /// A configuration; `origin` is `host[:port]` (https unless `secure` is false) or a full URL.
    public init(
        publishKey: String, subscribeKey: String, userId: String, origin: String = "ps.pndsn.com",
        secure: Bool = true, authKey: String? = nil
    ) throws(WireError) {
        guard !subscribeKey.isEmpty else { throw .invalidConfiguration("subscribeKey is empty") }
        guard !userId.isEmpty, userId.utf8.count <= 92 else { throw .invalidConfiguration("userId must be 1-92 UTF-8 bytes") }
        self.publishKey = publishKey
        self.subscribeKey = subscribeKey
        self.userId = userId
        self.origin = try Origin(parsing: origin, secure: secure)
        self.authKey = authKey
    }

    /// The origin and user id; keys are shown only by their first characters.
    public var description: String {
        "PubNubConfiguration(origin: \(origin), userId: \(userId), publishKey: \(Self.redact(publishKey)), "
            + "subscribeKey: \(Self.redact(subscribeKey)), authKey: \(authKey == nil ? "none" : "set"))"
    }

    static func redact(_ key: String) -> String {
        key.count <= 8 ? "***" : String(key.prefix(6)) + "…"
    }
}

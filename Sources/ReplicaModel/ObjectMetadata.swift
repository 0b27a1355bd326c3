import Foundation

/// What a DataSync server keeps about a user, channel or membership beyond its chat fields: the
/// class it belongs to, when it expires, and a membership's own id (`docs/datasync.md`, "The
/// mapping"). App Context has none of these, so objects from it carry `nil`.
///
/// It is server data, stored with the object and read back with it, never written by an edit
/// and never encoded in the object's JSON.
///
/// ```swift
/// if let expiresAt = member.metadata?.expiresAt, expiresAt.date < soon {
///     showRejoinHint(member.channelId)      // DataSync removes the membership at expiresAt
/// }
/// ```
public struct ObjectMetadata: Hashable, Sendable {
    /// A membership's own id on the server (DataSync names each membership; another client's
    /// need not be the id pnreplicate would give it). Nil for users and channels.
    public var backendId: String?
    /// The class the object belongs to (`User`, `Channel`, `Membership`, or the app's subclass).
    public var className: String?
    /// The class's version.
    public var classVersion: Int?
    /// When the server deletes the object: its class's time to live after creation, rounded up to
    /// the next UTC midnight. Nil when the server did not say.
    public var expiresAt: ISOTimestamp?

    /// Metadata as a server gave it; every part is optional (a DataSync answer names all but
    /// ``backendId`` for users and channels). Tests and test doubles make it; a replica reads it
    /// from DataSync's answers.
    ///
    /// ```swift
    /// let metadata = ObjectMetadata(className: "ChatUser", classVersion: 1, expiresAt: try ISOTimestamp(parsing: "2027-01-01T00:00:00Z"))
    /// ```
    public init(backendId: String? = nil, className: String? = nil, classVersion: Int? = nil, expiresAt: ISOTimestamp? = nil) {
        self.backendId = backendId
        self.className = className
        self.classVersion = classVersion
        self.expiresAt = expiresAt
    }

    /// Whether it holds nothing (read from a row: nil metadata then).
    public var isEmpty: Bool { backendId == nil && className == nil && classVersion == nil && expiresAt == nil }
}

import Foundation

/// A real-time membership update (type `membership`, event `set`): the pair, the new `updated`
/// and `eTag`, and only the fields that changed, read by name as on ``FieldChanges``
/// (`changeset.status`).
@dynamicMemberLookup
public struct MemberChangeset<Custom: ChatCustomData>: Hashable, Sendable {
    /// The channel id.
    public var channelId: String
    /// The user id.
    public var userId: String
    /// The new `updated`.
    public var updated: ISOTimestamp
    /// The new eTag.
    public var eTag: String
    /// The changed fields.
    public var changes = MemberEdit<Custom>()

    /// A changeset that changes nothing yet.
    public init(channelId: String, userId: String, updated: ISOTimestamp, eTag: String) {
        self.channelId = channelId
        self.userId = userId
        self.updated = updated
        self.eTag = eTag
    }

    /// A changed field, by its name on the membership (`changeset.status`, `changeset.custom`).
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<MemberEdit<Custom>, Value>) -> Value {
        get { changes[keyPath: keyPath] }
        set { changes[keyPath: keyPath] = newValue }
    }

    /// The patched membership, or nil when it is for another pair, older than `member` or carries
    /// its eTag (``VersionDecision``).
    public func apply(to member: ChatMember<Custom>) -> ChatMember<Custom>? {
        guard member.channelId == channelId, member.userId == userId,
            VersionDecision(incoming: (updated, eTag), stored: (member.updated, member.eTag)) == .apply
        else { return nil }
        var result = changes.applied(to: member)
        result.updated = updated
        result.eTag = eTag
        return result
    }
}

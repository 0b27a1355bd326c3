import Foundation

/// A real-time membership update (type `membership`, event `set`).
public struct MemberChangeset<Custom: CustomData>: Hashable, Sendable {
    /// The channel id.
    public var channelId: String
    /// The user id.
    public var userId: String
    /// The new `updated`.
    public var updated: ISOTimestamp
    /// The new eTag.
    public var eTag: String
    /// Changed status.
    public var status: FieldUpdate<String> = .unchanged
    /// Changed type.
    public var type: FieldUpdate<String> = .unchanged
    /// Changed custom data (replaced whole).
    public var custom: FieldUpdate<Custom> = .unchanged

    /// A changeset that changes nothing yet.
    public init(channelId: String, userId: String, updated: ISOTimestamp, eTag: String) {
        self.channelId = channelId
        self.userId = userId
        self.updated = updated
        self.eTag = eTag
    }

    /// The patched membership, or nil when it is for another pair, older than `member` or carries
    /// its eTag (``VersionDecision``).
    public func apply<C: ChatCustomData>(to member: ChatMember<C>) -> ChatMember<C>? where C.Member == Custom {
        guard member.channelId == channelId, member.userId == userId,
            VersionDecision(incoming: (updated, eTag), stored: (member.updated, member.eTag)) == .apply
        else { return nil }
        var result = member
        result.status = status.applied(to: member.status)
        result.type = type.applied(to: member.type)
        result.custom = custom.applied(to: member.custom)
        result.updated = updated
        result.eTag = eTag
        return result
    }
}

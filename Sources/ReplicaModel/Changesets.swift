import Foundation

/// A real-time membership update (type `membership`, event `set`): the pair, the new `updated`
/// and `eTag`, and only the fields that changed, read by name as on ``FieldChanges``
/// (`changeset.status`).
public typealias MemberChangeset<Custom: ChatCustomData> = ObjectChangeset<ChatMember<Custom>>

extension ObjectChangeset where Entity.Key == MemberKey {
    /// A changeset of the membership of `userId` in `channelId` that changes nothing yet.
    public init(channelId: String, userId: String, updated: ISOTimestamp, eTag: String) {
        self.init(key: MemberKey(channelId: channelId, userId: userId), updated: updated, eTag: eTag)
    }

    /// The membership's channel id.
    public var channelId: String { key.channelId }
    /// The membership's user id.
    public var userId: String { key.userId }
}

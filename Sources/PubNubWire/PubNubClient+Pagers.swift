import Foundation
import ReplicaModel

// Shortcuts on the client for every pager; the engine and the stop rule are in Pagers.swift.

extension PubNubClient {
    /// Lists message actions with a ``MessageActionsQuery``.
    public func listMessageActions(_ query: MessageActionsQuery) async throws(WireError) -> MessageActionsPage {
        try await listMessageActions(channel: query.channel, start: query.start, end: query.end, limit: query.limit)
    }

    /// The history of `channel` back from `start` (exclusive; nil: now) to `end` (inclusive),
    /// `pageSize` messages per request; see ``HistoryPages``. Errors are `WireError`,
    /// ``PagingError`` and `CancellationError`; no request is retried.
    public func historyPages(
        channel: String, pageSize: Int = 100, start: Timetoken? = nil, end: Timetoken? = nil
    ) -> HistoryPages {
        HistoryPages(channel: channel, pageSize: pageSize, start: start, end: end) { query in
            try await self.fetchHistory(query)
        }
    }

    /// The message actions of `channel` back from `start` (exclusive; nil: now) to `end`
    /// (inclusive); see ``MessageActionPages``. No request is retried.
    public func messageActionPages(
        channel: String, start: Timetoken? = nil, end: Timetoken? = nil, limit: Int = 100
    ) -> MessageActionPages {
        MessageActionPages(channel: channel, start: start, end: end, limit: limit) { query in
            try await self.listMessageActions(query)
        }
    }

    /// Every user of the keyset matching `query` (scope `users`); see ``ObjectPages``.
    public func userPages<C: CustomData>(_ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type = FlatCustom.self)
        -> ObjectPages<ChatUser<C>>
    {
        ObjectPages(scope: "users", query: query) { query in try await self.listUsers(query, as: C.self) }
    }

    /// Every channel of the keyset matching `query` (scope `channels`); see ``ObjectPages``.
    public func channelPages<C: CustomData>(_ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type = FlatCustom.self)
        -> ObjectPages<ChatChannel<C>>
    {
        ObjectPages(scope: "channels", query: query) { query in try await self.listChannels(query, as: C.self) }
    }

    /// Every membership of `userId` (scope `memberships:<userId>`); see ``ObjectPages``.
    public func membershipPages<C: ChatCustomData>(
        userId: String, _ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type
    ) -> ObjectPages<WireMembership<C>> {
        ObjectPages(scope: "memberships:\(userId)", query: query) { query in
            try await self.getMemberships(userId: userId, query, as: C.self)
        }
    }

    /// Every member of `channelId` (scope `members:<channelId>`); see ``ObjectPages``.
    public func memberPages<C: ChatCustomData>(
        channelId: String, _ query: ObjectListQuery = ObjectListQuery(), as custom: C.Type
    ) -> ObjectPages<WireChannelMember<C>> {
        ObjectPages(scope: "members:\(channelId)", query: query) { query in
            try await self.getMembers(channelId: channelId, query, as: C.self)
        }
    }
}

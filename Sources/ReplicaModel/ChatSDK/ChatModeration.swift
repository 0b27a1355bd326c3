import Foundation

/// The PubNub Chat SDK's moderation data on the wire, and which objects it keeps out of sight:
/// the one place their names, prefixes and shapes are decided (`docs/chat.md`, "Moderation").
///
/// Sources: `pubnub/kmp-chat`, `pubnub-chat-impl/src/commonMain/.../internal/`: `Constants.kt`
/// (prefixes, keys), `ChatImpl.setRestrictions`, `UserImpl.getMemberships` (the hiding filter),
/// `restrictions/RestrictionImpl.kt`, `message/BaseMessage.report`, `mutelist/MutedUsersManagerImpl.kt`.
///
/// - A **restriction** of user U in channel C is U's membership of the hidden channel
///   `PUBNUB_INTERNAL_MODERATION_C` (type `pn.prv`), custom `{"ban":Bool,"mute":Bool,"reason":String?}`;
///   lifting removes the membership. A `moderation` event on `PUBNUB_INTERNAL_MODERATION.U` (a dot)
///   announces each change.
/// - A **report** is a message published to `PUBNUB_INTERNAL_MODERATION_C`.
/// - The **mute list** of U is the user object `PN_PRV.U.mute1` (type `pn.prv`, name U), custom
///   `{"m":"id1,id2"}`.
///
/// ```swift
/// ChatModeration.moderationChannel(for: "general")            // "PUBNUB_INTERNAL_MODERATION_general"
/// ChatModeration.muteListId(of: "alice")                       // "PN_PRV.alice.mute1"
/// ChatModeration.isHidden(channel: "PUBNUB_INTERNAL_MODERATION_general")   // true
/// ```
public enum ChatModeration {
    /// What every Chat SDK internal channel id starts with.
    public static let internalPrefix = "PUBNUB_INTERNAL_"
    /// What a private object's id starts with (the mute list).
    public static let privatePrefix = "PN_PRV."
    /// The `type` of the Chat SDK's private channels and users.
    public static let privateType = "pn.prv"
    /// The prefix of a channel's moderation channel (restrictions as memberships, reports as messages).
    public static let moderationPrefix = "PUBNUB_INTERNAL_MODERATION_"
    /// The prefix of a user's moderation event channel (note the dot).
    public static let eventPrefix = "PUBNUB_INTERNAL_MODERATION."
    /// The restriction custom key of a ban (`true`: banned).
    public static let banKey = "ban"
    /// The restriction custom key of a mute (`true`: muted).
    public static let muteKey = "mute"
    /// The restriction custom key of the moderator's reason (a string or null).
    public static let reasonKey = "reason"
    /// The mute list's custom key: the muted ids, comma-joined.
    public static let mutedKey = "m"
    /// The `type` of a moderation event.
    public static let moderationType = "moderation"
    /// The `type` of a report.
    public static let reportType = "report"
    /// The `custom_message_type` the Chat SDK gives a moderation event.
    public static let moderationMessageType = "moderated"

    // MARK: Hidden objects

    /// Whether the Chat SDK keeps a channel out of sight: an internal channel (`PUBNUB_INTERNAL_*`:
    /// a channel's moderation channel, a user's moderation event channel), a private one
    /// (`PN_PRV.*`, or type `pn.prv`). Thread channels (`PUBNUB_INTERNAL_THREAD_*`) are not hidden:
    /// their messages are the thread's replies.
    public static func isHidden(channel id: String, type: String? = nil) -> Bool {
        if type == privateType || id.hasPrefix(privatePrefix) { return true }
        return id.hasPrefix(internalPrefix) && !id.hasPrefix(ChatSDKFormat.threadChannelPrefix)
    }

    /// Whether the Chat SDK keeps a user object out of sight: a private object (`PN_PRV.*` or type `pn.prv`).
    public static func isHidden(user id: String, type: String? = nil) -> Bool {
        type == privateType || id.hasPrefix(privatePrefix)
    }

    // MARK: Restrictions

    /// The hidden channel that holds the restrictions in (and the reports of) `channel`.
    public static func moderationChannel(for channel: String) -> String { moderationPrefix + channel }

    /// The channel a moderation channel restricts, or nil when `id` is not one.
    public static func restrictedChannel(ofModerationChannel id: String) -> String? {
        guard id.hasPrefix(moderationPrefix), id.count > moderationPrefix.count else { return nil }
        return String(id.dropFirst(moderationPrefix.count))
    }

    /// The channel where `user`'s restriction changes are announced.
    public static func eventChannel(for user: String) -> String { eventPrefix + user }

    /// A restriction read from a moderation membership's custom data, as the Chat SDK reads it: a
    /// flag counts only when it is JSON `true`; the reason is any value as text.
    public static func restriction(user: String, channel: String, custom: JSONValue?) -> ChannelRestriction {
        let object = custom?.objectValue ?? [:]
        let reason: String? =
            switch object[reasonKey] {
            case nil, .null?: nil
            case .string(let text)?: text
            case let other?: (try? other.jsonString()) ?? ""
            }
        return ChannelRestriction(
            userId: user, channelId: channel, ban: object[banKey] == .bool(true), mute: object[muteKey] == .bool(true),
            reason: reason)
    }

    /// The custom data of a restriction's membership.
    public static func restrictionCustom(ban: Bool, mute: Bool, reason: String?) -> JSONValue {
        [banKey: .bool(ban), muteKey: .bool(mute), reasonKey: reason.map(JSONValue.string) ?? .null]
    }

    /// A `moderation` event: `{"type":"moderation","channelId":"PUBNUB_INTERNAL_MODERATION_<ch>",
    /// "restriction":"banned|muted|lifted","reason":…}`.
    public static func moderationEvent(channel: String, ban: Bool, mute: Bool, reason: String?) -> JSONValue {
        [
            "type": .string(moderationType), "channelId": .string(moderationChannel(for: channel)),
            "restriction": .string(ban ? "banned" : mute ? "muted" : "lifted"), "reason": reason.map(JSONValue.string) ?? .null,
        ]
    }

    /// Reads a `moderation` event published on `user`'s event channel: the restriction it
    /// announces (`lifted`: neither flag), or nil when the payload is not one.
    public static func restriction(fromEvent payload: JSONValue, user: String) -> ChannelRestriction? {
        guard let object = payload.objectValue, object["type"] == .string(moderationType),
              let moderation = object["channelId"]?.stringValue,
              let channel = restrictedChannel(ofModerationChannel: moderation),
              let kind = object["restriction"]?.stringValue, ["banned", "muted", "lifted"].contains(kind)
        else { return nil }
        return ChannelRestriction(
            userId: user, channelId: channel, ban: kind == "banned", mute: kind == "muted", reason: object["reason"]?.stringValue)
    }

    // MARK: Reports

    /// The report of a message, published to its channel's moderation channel:
    /// `{"type":"report","text":…,"reason":…,"reportedMessageTimetoken":"<tt>","reportedMessageChannelId":…,"reportedUserId":…}`.
    public static func reportBody(text: String, reason: String, messageTimetoken: Timetoken, channel: String, author: String)
        -> JSONValue
    {
        [
            "type": .string(reportType), "text": .string(text), "reason": .string(reason),
            "reportedMessageTimetoken": .string(String(messageTimetoken.rawValue)),
            "reportedMessageChannelId": .string(channel), "reportedUserId": .string(author),
        ]
    }

    // MARK: The mute list

    /// The id of `user`'s mute list object.
    public static func muteListId(of user: String) -> String { "\(privatePrefix)\(user).mute1" }

    /// The user whose mute list `id` is, or nil when it is not a mute list's id.
    public static func muteListOwner(ofId id: String) -> String? {
        guard id.hasPrefix(privatePrefix), id.hasSuffix(".mute1") else { return nil }
        let owner = id.dropFirst(privatePrefix.count).dropLast(".mute1".count)
        return owner.isEmpty ? nil : String(owner)
    }

    /// The muted ids of a mute list's custom data (`m`, comma-joined; empty parts dropped), sorted
    /// and without repeats.
    public static func mutedUsers(fromCustom custom: JSONValue?) -> [String] {
        guard let list = custom?.objectValue?[mutedKey]?.stringValue else { return [] }
        return Array(Set(list.split(separator: ",").map(String.init))).sorted()
    }

    /// The fields the Chat SDK writes to a mute list (`setUUIDMetadata`): name (the owner), type
    /// `pn.prv`, custom `{"m": "<ids, comma-joined>"}` (an empty string when nobody is muted).
    public static func muteListFields(owner: String, muted: [String]) -> [String: JSONValue] {
        ["name": .string(owner), "type": .string(privateType), "custom": [mutedKey: .string(muted.joined(separator: ","))]]
    }
}

/// What a moderator restricted a user to in one channel (the Chat SDK's `Restriction`): banned
/// (may neither read nor write there), muted (may read, not send), with an optional reason.
/// Neither flag means no restriction (lifted).
public struct ChannelRestriction: Sendable, Hashable, Codable {
    /// The restricted user.
    public var userId: String
    /// The channel the restriction applies to (the moderation channel's prefix removed).
    public var channelId: String
    /// Whether the user is banned from the channel.
    public var ban: Bool
    /// Whether the user is muted in the channel.
    public var mute: Bool
    /// The moderator's reason, if they gave one.
    public var reason: String?

    /// A restriction.
    public init(userId: String, channelId: String, ban: Bool, mute: Bool, reason: String? = nil) {
        self.userId = userId
        self.channelId = channelId
        self.ban = ban
        self.mute = mute
        self.reason = reason
    }

    /// Whether it restricts anything (a lifted restriction does not).
    public var isRestricting: Bool { ban || mute }

    /// `banned`, `muted` or `lifted`, as the Chat SDK's moderation event names it.
    public var word: String { ban ? "banned" : mute ? "muted" : "lifted" }
}

/// What this device changed in a mute list: the users it muted and unmuted. A mute list is written
/// whole (the Chat SDK's `PN_PRV.<user>.mute1`), so a write applies the change to the server's list
/// of the moment, not the list the device saw: another device's mutes are kept. (The Chat SDK
/// writes its in-memory list as it is: the last writer wins.)
///
/// ```swift
/// let change = MuteListChange(muted: ["a"], unmuted: ["x"])
/// change.applied(to: ["x", "y"])      // ["a", "y"]
/// ```
public struct MuteListChange: Sendable, Hashable, Codable {
    /// The users muted, sorted.
    public var muted: [String]
    /// The users unmuted, sorted.
    public var unmuted: [String]

    /// A change; a user in both lists counts as muted.
    public init(muted: some Collection<String>, unmuted: some Collection<String>) {
        self.muted = Set(muted).sorted()
        self.unmuted = Set(unmuted).subtracting(muted).sorted()
    }

    /// Whether it changes nothing.
    public var isEmpty: Bool { muted.isEmpty && unmuted.isEmpty }

    /// `list` with the muted users added and the unmuted ones removed, sorted.
    public func applied(to list: some Collection<String>) -> [String] {
        Set(list).subtracting(unmuted).union(muted).sorted()
    }

    /// This change followed by `later`: what a later mute or unmute of the same user says wins.
    public func then(_ later: MuteListChange) -> MuteListChange {
        MuteListChange(
            muted: Set(muted).subtracting(later.unmuted).union(later.muted),
            unmuted: Set(unmuted).subtracting(later.muted).union(later.unmuted))
    }
}

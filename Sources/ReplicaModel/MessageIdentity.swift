import Foundation

/// Which stored message a message from PubNub is: the one rule that keeps a peer from rewriting
/// another user's message.
///
/// A message's payload names an `id` that its sender chose, so any key holder can publish a
/// payload that carries someone else's id. The id alone therefore never makes two messages the
/// same. A message from the server is the stored message with its payload id only when it is
/// that message:
///
/// - a stored **sent** message (it has a timetoken) is the same message only at the same channel
///   and timetoken;
/// - a stored **pending** message (ours, not yet acknowledged) is the same message only in the
///   same channel and from the same publisher (the echo or history copy of our own publish).
///
/// Any other message carrying a known id is a different message: it is stored under the id
/// derived from its own channel and timetoken (``derivedId(channel:timetoken:)``), never merged.
/// Ids that start with ``derivedPrefix`` are this rule's own namespace: a payload that claims one
/// is stored under its own place's id too, so a derived id always names one channel and timetoken.
///
/// ```swift
/// let id = MessageIdentity.storedId(payloadId: "m1", channel: "general", timetoken: 17,
///                                   publisher: "mallory", stored: .init(channel: "general", timetoken: 12, userId: "alice"))
/// // "pn:general:17": Mallory's copy of Alice's id is a message of its own
/// ```
public enum MessageIdentity {
    /// Where a stored message is and who wrote it: what the identity rule compares.
    public struct Place: Sendable, Hashable {
        /// The message's channel.
        public var channel: String
        /// Its timetoken, or nil while it is pending.
        public var timetoken: Timetoken?
        /// Its publisher.
        public var userId: String

        /// A place.
        public init(channel: String, timetoken: Timetoken?, userId: String) {
            self.channel = channel
            self.timetoken = timetoken
            self.userId = userId
        }
    }

    /// The prefix of derived ids (`pn:<channel>:<timetoken>`).
    public static let derivedPrefix = "pn:"

    /// The id of the message published at `timetoken` in `channel` when its payload's id cannot
    /// be taken (no id, a foreign payload, an id another message holds).
    public static func derivedId(channel: String, timetoken: Timetoken) -> String {
        "\(derivedPrefix)\(channel):\(timetoken)"
    }

    /// Whether a message from the server at (`channel`, `timetoken`) by `publisher` is the stored
    /// message at `stored`.
    public static func isSame(_ stored: Place, channel: String, timetoken: Timetoken, publisher: String?) -> Bool {
        guard stored.channel == channel else { return false }
        if let storedTimetoken = stored.timetoken { return storedTimetoken == timetoken }
        return publisher == stored.userId
    }

    /// The id under which to store a message from the server whose payload says `payloadId`:
    /// the payload's id when no stored message has it or when the stored one is this message
    /// (``isSame(_:channel:timetoken:publisher:)``), else the derived id.
    ///
    /// - Parameter stored: the stored message with id `payloadId`, if any.
    public static func storedId(
        payloadId: String, channel: String, timetoken: Timetoken, publisher: String?, stored: Place?
    ) -> String {
        let derived = derivedId(channel: channel, timetoken: timetoken)
        if payloadId == derived { return derived }
        if payloadId.hasPrefix(derivedPrefix) { return derived }
        guard let stored else { return payloadId }
        return isSame(stored, channel: channel, timetoken: timetoken, publisher: publisher) ? payloadId : derived
    }
}

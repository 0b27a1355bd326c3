import Foundation
import ReplicaModel

/// What an outbox op does.
public enum OutboxKind: String, Codable, Sendable, CaseIterable {
    /// Publish a message.
    case send
    /// Add a message action (a reaction).
    case addReaction
    /// Remove this user's message action.
    case removeReaction
    /// Set a membership's status, type or custom data.
    case setMembership
    /// Remove a membership.
    case removeMembership
    /// PATCH a user's metadata.
    case setUser
    /// Delete a user's metadata.
    case removeUser
    /// PATCH a channel's metadata.
    case setChannel
    /// Delete a channel's metadata.
    case removeChannel
    /// Publish the Chat SDK's mention event to a mentioned user, after the message.
    case mention
    /// Signal the Chat SDK's read receipt on a channel, after the read position is written.
    case receipt
    /// Delete a message from PubNub's history (a hard delete).
    case hardDelete
    /// Publish the Chat SDK's report of a message to its channel's moderation channel.
    case report
    /// Write the current user's mute list (the Chat SDK's `PN_PRV.<user>.mute1` user object).
    case setMuteList
    /// Publish the Chat SDK's invitation event to an invited user, after their pending membership.
    case invite
    /// Register or remove a device for mobile push.
    case push
    /// Write the current user's read positions of many channels in one membership PATCH (mark
    /// all read), as the Chat SDK's `markAllMessagesAsRead` does.
    case readPositions
    /// Create, replace or patch a record of one of the app's own DataSync classes
    /// (`AppRecordWrite`).
    case setAppRecord
    /// Delete a record of one of the app's own DataSync classes.
    case removeAppRecord
}

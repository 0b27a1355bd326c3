import Foundation
import GRDB
import ReplicaModel

/// How the store reads the PubNub Chat SDK's message actions into a message: the one place the
/// SQL of "shown text" and "soft-deleted" is written.
///
/// - **Edited text**: the value of the `edited` action with the largest action timetoken,
///   whoever added it (the Chat SDK has no author check). An edit still in the outbox (no action
///   timetoken yet) counts as the newest.
/// - **Deleted**: the message has a `deleted` action with the value `deleted`.
///
/// An action is found by the message's timetoken once it has one, and by the message's id while
/// both are pending; both arms use an index (`message_actions_by_timetoken`,
/// `message_actions_message_id`).
enum ChatSemantics {
    static let editedTextColumn = """
        (SELECT e.value FROM (
            SELECT a.value, a.action_timetoken FROM message_actions a
            WHERE a.channel_id = msg.channel_id AND a.message_timetoken = msg.timetoken AND a.type = '\(ChatSDKFormat.editedType)'
            UNION ALL
            SELECT a.value, a.action_timetoken FROM message_actions a
            WHERE a.message_id = msg.id AND a.message_timetoken IS NULL AND a.type = '\(ChatSDKFormat.editedType)'
        ) e ORDER BY e.action_timetoken IS NULL DESC, e.action_timetoken DESC LIMIT 1)
        """

    static let isDeletedColumn = """
        (EXISTS (SELECT 1 FROM message_actions a
                 WHERE a.channel_id = msg.channel_id AND a.message_timetoken = msg.timetoken
                   AND a.type = '\(ChatSDKFormat.deletedType)' AND a.value = '\(ChatSDKFormat.deletedValue)')
         OR EXISTS (SELECT 1 FROM message_actions a
                    WHERE a.message_id = msg.id AND a.message_timetoken IS NULL
                      AND a.type = '\(ChatSDKFormat.deletedType)' AND a.value = '\(ChatSDKFormat.deletedValue)'))
        """

    /// A condition that leaves out soft-deleted messages (for `msg`).
    static let notDeleted = "NOT \(isDeletedColumn)"
}

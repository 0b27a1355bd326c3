import Foundation
import ReplicaModel

/// A message as the simulator stores it.
struct StoredMessage: Sendable, Hashable {
    var timetoken: UInt64
    var message: JSONValue
    var publisher: String
    var meta: JSONValue?
    var customMessageType: String?
    /// History's `message_type`: nil for a message, 4 for a file message.
    var messageType: Int?
}

/// A message action as the simulator stores it.
struct StoredAction: Sendable, Hashable {
    var type: String
    var value: String
    var uuid: String
    var messageTimetoken: UInt64
    var actionTimetoken: UInt64

    var json: JSONValue {
        [
            "type": .string(type), "value": .string(value), "uuid": .string(uuid),
            "actionTimetoken": .string(String(actionTimetoken)), "messageTimetoken": .string(String(messageTimetoken)),
        ]
    }
}

/// A user or channel as the simulator stores it.
struct StoredObject: Sendable, Hashable {
    var id: String
    /// name, externalId, profileUrl, email / description, type, status, custom.
    var fields: [String: JSONValue]
    var updated: String
    var eTag: String
}

/// A membership as the simulator stores it.
struct StoredMembership: Sendable, Hashable {
    var status: JSONValue = .null
    var type: JSONValue = .null
    var custom: JSONValue = .null
    var updated: String
    var eTag: String
}

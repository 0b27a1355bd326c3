import Foundation
import ReplicaModel

/// What a send op publishes: the chat payload `message` (with its `id`) to `channel`, with `meta`
/// (the app's meta plus `pnr_op`, the op id) and the message's `custom_message_type`, if any.
/// With `files`, the op first uploads the files of its `file_uploads` rows, then publishes them
/// in that shape (`docs/files.md`).
///
/// ```swift
/// if case .send(let send) = entry.operation {
///     print("publish \(send.messageId) to \(send.channel)")
/// }
/// ```
public struct MessageSend: Sendable, Hashable {
    /// The channel the message is published to.
    public var channel: String
    /// The message's own id (the payload's `id`), what finds it again in history.
    public var messageId: String
    /// The chat payload as it is published.
    public var message: JSONValue
    /// The publish's `meta`: the app's, with `pnr_op`.
    public var meta: JSONValue?
    /// The message's `custom_message_type`, if any.
    public var customMessageType: String?
    /// How the op's files are published, when it has any.
    public var files: FileShape?

    /// A send.
    public init(
        channel: String, messageId: String, message: JSONValue, meta: JSONValue?, customMessageType: String? = nil,
        files: FileShape? = nil
    ) {
        self.channel = channel
        self.messageId = messageId
        self.message = message
        self.meta = meta
        self.customMessageType = customMessageType
        self.files = files
    }
}

import Foundation
import ReplicaModel

/// How a send with files publishes them (`docs/files.md`, "Two shapes").
public enum FileShape: String, Sendable, Hashable, Codable {
    /// One file message (`publish-file`, stored): `{"message": <the message>, "file": {…}}`. The
    /// file message carries the exactly-once guarantee. What the core SDKs' `sendFile` sends.
    case fileMessage
    /// The Chat SDK's: each file announced by a `store=0` file event (at most once), then the
    /// text message with the files in its `files`, which carries the exactly-once guarantee.
    case chatText
}

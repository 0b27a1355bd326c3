import Foundation
import ReplicaModel

/// A DataSync event (`"e": 5`; the protocol reference, §12): a record was created, updated (by a
/// PUT or a PATCH: both are `update`) or deleted. A user's, channel's or entity's event arrives on
/// the channel named by its id; a membership's (or relationship's) on both ends' id channels.
///
/// ```json
/// {"version":"1.0",
///  "metadata":{"event":"create","source":"data-sync","type":"membership","className":"Membership","classLevel":"Global","classVersion":1},
///  "data":{"id":"m-1","channelId":"general","userId":"alice","eTag":"3w5e1","updatedAt":"…","status":"active","payload":{…}}}
/// ```
///
/// A create or update carries the record's whole state in ``row`` (never its class: that is in
/// ``className``, ``classLevel``, ``classVersion``); a delete carries only the id and
/// `deletedAt`. Delivery may repeat an event: apply them by version.
public struct DataSyncEvent: Sendable, Hashable {
    /// What happened.
    public enum Verb: Sendable, Hashable {
        /// `create`.
        case create
        /// `update`: a replace or a patch.
        case update
        /// `delete`.
        case delete
        /// A verb this version does not know; skip the event.
        case other(String)

        init(_ text: String) {
            switch text {
            case "create": self = .create
            case "update": self = .update
            case "delete": self = .delete
            default: self = .other(text)
            }
        }
    }

    /// `metadata.event`.
    public var verb: Verb
    /// `metadata.type` as sent: `user`, `channel`, `membership`, `entity` or `relationship`, the
    /// record's Global ancestor (a subclass of `User` reports `user`). Older services sent
    /// `entity` and `relationship` for the built-in classes; whoever applies the event decides
    /// from ``className`` too.
    public var type: String
    /// `metadata.className` (`User`, `Membership`, an app's class; older services: `User::…`).
    public var className: String?
    /// `metadata.classLevel` (`Global` or `SubKey`).
    public var classLevel: String?
    /// `metadata.classVersion`.
    public var classVersion: Int?
    /// `data`: the record (a delete: its id and ``DataSyncRow/deletedAt`` only).
    public var row: DataSyncRow

    /// An event.
    public init(verb: Verb, type: String, className: String? = nil, classLevel: String? = nil, classVersion: Int? = nil, row: DataSyncRow) {
        self.verb = verb
        self.type = type
        self.className = className
        self.classLevel = classLevel
        self.classVersion = classVersion
        self.row = row
    }
}

extension SubscribeDecoding {
    /// An `e: 5` payload: ``SubscribeEvent/dataSync(_:)``; ``SubscribeEvent/unknown(kind:)`` when
    /// it is not DataSync's shape (no `metadata`, or another `source`), so that a future use of the
    /// kind is skipped, not taken for a gap; ``SubscribeEvent/unreadable(reason:)`` when DataSync's
    /// metadata comes with data that cannot be read.
    static func dataSync(_ payload: JSONValue) -> SubscribeEvent {
        guard let d = payload.objectValue, let metadata = d["metadata"]?.objectValue,
              metadata["source"].map({ $0.stringValue == "data-sync" }) ?? true
        else { return .unknown(kind: 5) }
        guard let event = metadata["event"]?.stringValue, let type = metadata["type"]?.stringValue else {
            return .unreadable(reason: "DataSync event without metadata.event or metadata.type")
        }
        guard let data = d["data"]?.objectValue else { return .unreadable(reason: "DataSync event without data") }
        let row: DataSyncRow
        do {
            row = try DataSyncRow(object: data)
        } catch {
            return .unreadable(reason: "DataSync \(type) \(event): \(error.reason)")
        }
        var version: Int?
        if case .int(let value)? = metadata["classVersion"] { version = Int(exactly: value) }
        return .dataSync(DataSyncEvent(
            verb: DataSyncEvent.Verb(event), type: type, className: metadata["className"]?.stringValue,
            classLevel: metadata["classLevel"]?.stringValue, classVersion: version, row: row))
    }
}

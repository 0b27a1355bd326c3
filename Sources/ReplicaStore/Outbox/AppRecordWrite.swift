import Foundation
import ReplicaModel

/// A write of one record of an app's own DataSync class (`docs/app-data.md`, "Writes"): the
/// record as this device wants it.
///
/// The op holds the whole wanted state (class version, status, payload), never a list of edits:
/// its request is computed when it is sent, from the op's base (its snapshot and eTag). An op
/// without a base (the server never had the record as far as this device knows) is a create
/// (`POST`); one with a base is a JSON Patch of the difference (`PATCH`, pinned by `If-Match`), or
/// the whole record (`PUT`) when ``replacesWhole``. So a conflict settled over the server's
/// version, or a create that met the id, needs no special case: the new base decides the verb. A
/// later edit merged into an unsent op simply replaces the wanted state.
///
/// ```swift
/// let write = AppRecordWrite(
///     kind: .entity, className: "Poll", id: "poll.1", classVersion: 1,
///     payload: ["question": "Lunch?", "options": ["pizza", "sushi"], "closed": false])
/// ```
public struct AppRecordWrite: Sendable, Hashable, Codable {
    /// Entity or relationship.
    public var kind: AppRecord.Kind
    /// The record's class.
    public var className: String
    /// The record's id.
    public var id: String
    /// Whether an edit replaces the record whole (`PUT`: a payload member left out goes) rather
    /// than patching what changed.
    public var replacesWhole: Bool
    /// The class version the record is to have (a patch that changes it is an upgrade).
    public var classVersion: Int
    /// The status the record is to have (nil: none).
    public var status: String?
    /// The payload the record is to have.
    public var payload: [String: JSONValue]
    /// A relationship's first end (sent by a create).
    public var endA: String?
    /// A relationship's second end (sent by a create).
    public var endB: String?
    /// How a patch is guarded (its class's ``ReplicaModel/AppConcurrency``): `If-Match` the base's
    /// eTag, or a JSON Patch `test` of each touched member's base value.
    public var concurrency: AppConcurrency

    /// A write.
    public init(
        kind: AppRecord.Kind, className: String, id: String, replacesWhole: Bool = false, classVersion: Int,
        status: String? = nil, payload: [String: JSONValue], endA: String? = nil, endB: String? = nil,
        concurrency: AppConcurrency = .eTag
    ) {
        self.kind = kind
        self.className = className
        self.id = id
        self.replacesWhole = replacesWhole
        self.classVersion = classVersion
        self.status = status
        self.payload = payload
        self.endA = endA
        self.endB = endB
        self.concurrency = concurrency
    }

    /// The record's mutable state as one JSON object: `classVersion`, `status` (`null` when none)
    /// and `payload`. What an op's fields are (``OutboxOperation/fields``): merging a later edit
    /// into an unsent op replaces each member, and a conflict is merged over it.
    public var state: [String: JSONValue] { AppRecordWrite.state(classVersion: classVersion, status: status, payload: payload) }

    /// The state object of a record (``state``'s form), for its base snapshot.
    public static func state(of record: AppRecord) -> [String: JSONValue] {
        state(classVersion: record.classVersion, status: record.status, payload: record.payload)
    }

    /// The state object of these values.
    public static func state(classVersion: Int, status: String?, payload: [String: JSONValue]) -> [String: JSONValue] {
        ["classVersion": .int(Int64(classVersion)), "status": status.map(JSONValue.string) ?? .null, "payload": .object(payload)]
    }

    /// The same write with another wanted state (``state``'s form; a member that is missing or
    /// of another type keeps this write's value).
    public func with(state: [String: JSONValue]) -> AppRecordWrite {
        var write = self
        if case .int(let version)? = state["classVersion"], let exact = Int(exactly: version) { write.classVersion = exact }
        switch state["status"] {
        case .string(let text)?: write.status = text
        case .null?: write.status = nil
        default: break
        }
        if case .object(let payload)? = state["payload"] { write.payload = payload }
        return write
    }

    /// The record this write leaves locally until the server answers, over `stored` (the record
    /// as shown now; nil when none is stored): the wanted state, the stored server fields kept.
    public func applied(to stored: AppRecord?) -> AppRecord {
        var record = stored ?? AppRecord(kind: kind, id: id, className: className, endA: endA, endB: endB)
        record.classVersion = classVersion
        record.status = status
        record.payload = payload
        if record.endA == nil { record.endA = endA }
        if record.endB == nil { record.endB = endB }
        return record
    }
}

/// The record a removal names.
public struct AppRecordTarget: Sendable, Hashable, Codable {
    /// Entity or relationship.
    public var kind: AppRecord.Kind
    /// The record's class.
    public var className: String
    /// The record's id.
    public var id: String

    /// A record's name.
    public init(kind: AppRecord.Kind, className: String, id: String) {
        self.kind = kind
        self.className = className
        self.id = id
    }
}

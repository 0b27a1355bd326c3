import Foundation
import ReplicaModel

/// The kinds of object whose edits can conflict.
public enum ConflictEntity: String, Sendable, Hashable, Codable, CaseIterable {
    /// User metadata (`If-Match` on the wire: 412 on a stale eTag).
    case user
    /// Channel metadata (`If-Match` on the wire).
    case channel
    /// A membership (no `If-Match` on the wire: detected by comparing eTags before writing).
    case membership
    /// A record of one of the app's own DataSync classes (`If-Match` on the wire; its fields
    /// are `classVersion`, `status` and `payload`, and the payload is merged member by member,
    /// `ThreeWayMerge.mergeJSON`).
    case record
}

/// How two edits of the same field are decided by ``ConflictPolicy/fieldMerge(tie:)``.
public enum TieRule: String, Sendable, Hashable, Codable {
    /// The local edit wins.
    case local
    /// The server's value wins.
    case remote
    /// The later of the local edit time and the server's `updated` wins (the server on a tie).
    case lastWriter
}

/// What the app wants done when a local edit meets a different version on the server.
///
/// Set one per entity kind in ``ConflictPolicies``. Every decision is written to the conflict log.
public enum ConflictPolicy: Sendable {
    /// Drop the local edit; keep the server's version.
    case serverWins
    /// Send the local edit again over the server's version (its new eTag as `If-Match`).
    case clientWins
    /// The later writer wins: the local edit's time against the server's `updated`.
    case lastWriterWins
    /// Three-way merge against the stored base: a field changed on one side takes that side, a
    /// field changed on both follows `tie`; `custom` is merged key by key the same way.
    case fieldMerge(tie: TieRule)
    /// The app decides, asynchronously.
    case custom(@Sendable (ConflictContext) async -> ConflictDecision)
    /// Leave the edit in `conflict` for a person (`pnreplicate conflicts resolve`).
    case manual

    /// The name written to the conflict log.
    public var name: String {
        switch self {
        case .serverWins: "serverWins"
        case .clientWins: "clientWins"
        case .lastWriterWins: "lastWriterWins"
        case .fieldMerge(let tie): "fieldMerge(\(tie.rawValue))"
        case .custom: "custom"
        case .manual: "manual"
        }
    }
}

/// The policy for each entity kind.
public struct ConflictPolicies: Sendable {
    /// For user metadata; default `fieldMerge(tie: .lastWriter)`.
    public var user: ConflictPolicy = .fieldMerge(tie: .lastWriter)
    /// For channel metadata; default `fieldMerge(tie: .lastWriter)`.
    public var channel: ConflictPolicy = .fieldMerge(tie: .lastWriter)
    /// For memberships; default `fieldMerge(tie: .lastWriter)`.
    public var membership: ConflictPolicy = .fieldMerge(tie: .lastWriter)
    /// For records of the app's own classes without a policy of their own in ``classes``;
    /// default `fieldMerge(tie: .lastWriter)`.
    public var record: ConflictPolicy = .fieldMerge(tie: .lastWriter)
    /// A policy per app class, by class name (`["Poll": .serverWins]`): it overrides ``record``
    /// for that class's records.
    public var classes: [String: ConflictPolicy] = [:]
    /// Automatic resolutions of one op before it is left in `conflict` for a person (a 412
    /// storm: the object keeps changing under us); default 3.
    public var maxAutomaticAttempts = 3

    /// The default policies.
    public init() {}

    /// The same policy for every kind.
    public init(all policy: ConflictPolicy) {
        user = policy
        channel = policy
        membership = policy
        record = policy
    }

    /// The policy of `entity`.
    public func policy(for entity: ConflictEntity) -> ConflictPolicy {
        switch entity {
        case .user: user
        case .channel: channel
        case .membership: membership
        case .record: record
        }
    }

    /// The policy of a record of class `className` (its own in ``classes``, else ``record``).
    public func policy(forClass className: String) -> ConflictPolicy { classes[className] ?? record }
}

/// Everything known about one conflict, in wire terms (field names as PubNub spells them).
public struct ConflictContext: Sendable, Hashable {
    /// What kind of object.
    public var entity: ConflictEntity
    /// Its id (`channel/user` for a membership).
    public var id: String
    /// The outbox op whose edit conflicted.
    public var opId: String
    /// The object's fields when the local edit was made (nil: it did not exist locally).
    public var base: [String: JSONValue]?
    /// The object's fields as the local edit wants them (base with the edit applied).
    public var local: [String: JSONValue]
    /// The server's current fields (nil: the server has no such object).
    public var remote: [String: JSONValue]?
    /// The fields the local edit set (none for a removal).
    public var edit: [String: JSONValue]
    /// Whether the local change removes the object (a membership removal) rather than editing it.
    public var isRemoval: Bool
    /// When the local edit was made.
    public var localEditedAt: Date
    /// The server version's `updated`.
    public var remoteUpdated: ISOTimestamp?
    /// The server version's eTag.
    public var remoteETag: String?
}

/// A resolution of one conflict.
public enum ConflictDecision: Sendable, Hashable {
    /// Keep the local edit: it is sent again over the server's version.
    case takeLocal
    /// Keep the server's version: the local edit is dropped.
    case takeRemote
    /// These field values are the result; what differs from the server's version is sent.
    case merged([String: JSONValue])
    /// Leave the edit in `conflict` for a person.
    case manual
}

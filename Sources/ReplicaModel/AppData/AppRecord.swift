import Foundation

/// One record of an app's own DataSync class as a replica holds it: an entity (a poll) or a
/// relationship (a vote from a poll to a user), with the server's system fields and the payload
/// the app defined.
///
/// Read records with the store's queries (`AppRecordFilter`); turn the payload into the app's own
/// type with ``decoded(as:)``:
///
/// ```swift
/// struct Poll: Codable { var question: String; var options: [String]; var closed: Bool }
/// let poll = try record.decoded(as: Poll.self)
/// ```
public struct AppRecord: Sendable, Hashable {
    /// Whether a record is an entity or a relationship: the two are kept apart on the server
    /// (`/entities`, `/relationships`), each with its own ids.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A record of an entity class.
        case entity = "entities"
        /// A link of a relationship class, from ``AppRecord/endA`` to ``AppRecord/endB``.
        case relationship = "relationships"
    }

    /// Entity or relationship.
    public var kind: Kind
    /// The record's id (unique within its ``kind``).
    public var id: String
    /// Its class (`Poll`).
    public var className: String
    /// The class version it was written in.
    public var classVersion: Int
    /// The server's free `status` string, if set.
    public var status: String?
    /// The app's data.
    public var payload: [String: JSONValue]
    /// The server's version tag (nil for a record no server answer carried yet).
    public var eTag: String?
    /// When the server created it.
    public var createdAt: ISOTimestamp?
    /// When the server last changed it.
    public var updatedAt: ISOTimestamp?
    /// When the server will delete it (its class's time to live), if it will.
    public var expiresAt: ISOTimestamp?
    /// A relationship's first end (an entity id, or a user or channel id for the built-in classes).
    public var endA: String?
    /// A relationship's second end.
    public var endB: String?

    /// A record. `payload` defaults to an empty object.
    public init(
        kind: Kind, id: String, className: String, classVersion: Int = 1, status: String? = nil,
        payload: [String: JSONValue] = [:], eTag: String? = nil, createdAt: ISOTimestamp? = nil,
        updatedAt: ISOTimestamp? = nil, expiresAt: ISOTimestamp? = nil, endA: String? = nil, endB: String? = nil
    ) {
        self.kind = kind
        self.id = id
        self.className = className
        self.classVersion = classVersion
        self.status = status
        self.payload = payload
        self.eTag = eTag
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.expiresAt = expiresAt
        self.endA = endA
        self.endB = endB
    }

    /// The payload decoded as the app's own type. Throws ``Undecodable`` naming the record and
    /// what did not fit (a record of an older class version may lack a field the type requires:
    /// make it optional, or read ``classVersion`` first).
    public func decoded<Payload: Decodable>(as type: Payload.Type) throws(Undecodable) -> Payload {
        do {
            return try JSONDecoder().decode(Payload.self, from: JSONValue.object(payload).jsonData())
        } catch {
            throw Undecodable(id: id, className: className, classVersion: classVersion, reason: "\(error)")
        }
    }

    /// A record whose payload does not decode as the type asked for (``AppRecord/decoded(as:)``).
    public struct Undecodable: Error, Sendable, Hashable, CustomStringConvertible {
        /// The record's id.
        public var id: String
        /// Its class.
        public var className: String
        /// Its class version.
        public var classVersion: Int
        /// What the decoder said.
        public var reason: String

        /// `record Poll/poll.1 (version 1) does not decode: …`.
        public var description: String {
            "record \(className)/\(id) (version \(classVersion)) does not decode: \(reason)"
        }
    }
}

/// One class of an app's own DataSync data that a replica keeps offline: an entity class (a poll,
/// a ticket, an order) or a relationship class between two entity classes (a vote between a poll
/// and a user), with the properties the app queries on, which records to keep, and how their
/// events reach the replica. Declared once in the replica's configuration; a changed declaration
/// takes effect at the next start (`docs/app-data.md`).
///
/// ```swift
/// let poll = AppClass(entity: "Poll", properties: [
///     AppProperty("question", kind: .string),
///     AppProperty("closed", kind: .boolean),
///     AppProperty("closesAt", kind: .datetime, isOptional: true),
/// ], routing: .wildcard(prefix: "poll"))
/// let vote = AppClass(relationship: "Vote", from: "Poll", to: "User", routing: .ends)
/// ```
public struct AppClass: Sendable, Hashable, Codable {
    /// Whether the class holds entities or relationships.
    public enum Kind: Sendable, Hashable, Codable {
        /// Records of their own.
        case entity
        /// Links from a record of class `a` to one of class `b` (`User` and `Channel` name the
        /// built-in classes).
        case relationship(a: String, b: String)
    }

    /// The class name, as defined on the keyset (`Poll`).
    public var name: String
    /// Entity or relationship, with a relationship's end classes.
    public var kind: Kind
    /// The class versions the replica reads, oldest first; new records are created in the last.
    public var versions: [Int]
    /// The properties the app queries on, filters its sync rule on and has checked before a
    /// write is queued: at most ``maxProperties``.
    public var properties: [AppProperty]
    /// Which records the replica keeps.
    public var rule: AppSyncRule
    /// How the records' live events reach the replica.
    public var routing: AppEventRouting
    /// How often a full listing of the class runs, to learn of records deleted while no event
    /// could reach the replica (24 hours by default).
    public var fullListingInterval: Duration
    /// What a write's precondition is.
    public var concurrency: AppConcurrency

    /// The most properties a class may declare for querying: each has a local index.
    public static let maxProperties = 6

    /// An entity class.
    public init(
        entity name: String, versions: [Int] = [1], properties: [AppProperty] = [], rule: AppSyncRule = .all,
        routing: AppEventRouting = .idChannels, fullListingInterval: Duration = .seconds(86_400), concurrency: AppConcurrency = .eTag
    ) {
        self.name = name
        self.kind = .entity
        self.versions = versions
        self.properties = properties
        self.rule = rule
        self.routing = routing
        self.fullListingInterval = fullListingInterval
        self.concurrency = concurrency
    }

    /// A relationship class from records of class `a` to records of class `b`. Its events reach a
    /// replica on its ends' channels (``AppEventRouting/ends``) unless told otherwise.
    public init(
        relationship name: String, from a: String, to b: String, versions: [Int] = [1], properties: [AppProperty] = [],
        rule: AppSyncRule = .all, routing: AppEventRouting = .ends, fullListingInterval: Duration = .seconds(86_400),
        concurrency: AppConcurrency = .eTag
    ) {
        self.init(entity: name, versions: versions, properties: properties, rule: rule, routing: routing,
                  fullListingInterval: fullListingInterval, concurrency: concurrency)
        self.kind = .relationship(a: a, b: b)
    }

    /// The version new records are created in: the last of ``versions``.
    public var currentVersion: Int { versions.last ?? 1 }

    /// The kind of record the class holds: ``AppRecord/Kind/relationship`` for a relationship
    /// class, else ``AppRecord/Kind/entity``.
    public var recordKind: AppRecord.Kind {
        if case .relationship = kind { return .relationship }
        return .entity
    }

    /// The declared property named `name`, or nil.
    public func property(named name: String) -> AppProperty? { properties.first { $0.name == name } }
}

/// A property of an ``AppClass``: a name, where the value sits in a record's payload, its kind,
/// and whether a record may leave it out.
///
/// ```swift
/// AppProperty("closesAt", kind: .datetime, isOptional: true)            // /payload/closesAt
/// AppProperty("city", at: ["address", "city"], kind: .string)           // /payload/address/city
/// ```
public struct AppProperty: Sendable, Hashable, Codable {
    /// The name queries and sync rules use.
    public var name: String
    /// The member names from the payload to the value (`["address", "city"]`).
    public var path: [String]
    /// The kind of value it holds.
    public var kind: DataSyncValueKind
    /// Whether a record may leave it out or hold `null`.
    public var isOptional: Bool

    /// A property at `path` under the payload (by default, the member named `name`).
    public init(_ name: String, at path: [String]? = nil, kind: DataSyncValueKind, isOptional: Bool = false) {
        self.name = name
        self.path = path ?? [name]
        self.kind = kind
        self.isOptional = isOptional
    }

    /// The record's JSON pointer to the value: `/payload/…`, members escaped as RFC 6901 says.
    public var pointer: String {
        "/payload/" + path.map { $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }
            .joined(separator: "/")
    }

    /// The value at ``path`` in `payload`, or nil when a member on the way is missing.
    public func value(in payload: [String: JSONValue]) -> JSONValue? {
        var current = JSONValue.object(payload)
        for member in path {
            guard let next = current.objectValue?[member] else { return nil }
            current = next
        }
        return current
    }
}

/// Which records of an ``AppClass`` a replica keeps (PowerSync calls these sync streams).
public enum AppSyncRule: Sendable, Hashable, Codable {
    /// Every record the replica's token may read.
    case all
    /// The records for which every predicate holds (sent as `filter_fast`).
    case matching([AppPredicate])

    /// The `filter_fast` expression of the rule, or nil for ``all``.
    public var filterFast: String? {
        guard case .matching(let predicates) = self, !predicates.isEmpty else { return nil }
        return predicates.map(\.filterText).joined(separator: " && ")
    }
}

/// One comparison of an ``AppSyncRule``: a declared property (or `status`) against a string,
/// number or boolean.
///
/// ```swift
/// AppPredicate("closed", .equal, false)          // closed == false
/// AppPredicate("team", .equal, "support")        // team == "support"
/// ```
public struct AppPredicate: Sendable, Hashable, Codable {
    /// A comparison's operator.
    public enum Comparison: String, Sendable, Hashable, Codable, CaseIterable {
        /// `==`
        case equal = "=="
        /// `!=`
        case notEqual = "!="
        /// `<`
        case less = "<"
        /// `<=`
        case lessOrEqual = "<="
        /// `>`
        case greater = ">"
        /// `>=`
        case greaterOrEqual = ">="
    }

    /// The property compared (a declared property's name, or `status`).
    public var property: String
    /// The operator.
    public var comparison: Comparison
    /// The value compared with: a string, a number or a boolean.
    public var value: JSONValue

    /// A predicate.
    public init(_ property: String, _ comparison: Comparison, _ value: JSONValue) {
        self.property = property
        self.comparison = comparison
        self.value = value
    }

    /// The predicate in DataSync's filter language: `closed == false`, `team == "support"`.
    public var filterText: String {
        let operand: String = switch value {
        case .string(let text): "\"\(text)\""
        case .int(let number): String(number)
        case .double(let number): String(number)
        case .bool(let flag): String(flag)
        default: "null"
        }
        return "\(property) \(comparison.rawValue) \(operand)"
    }
}

/// How the live events of an ``AppClass``'s records reach a replica (DataSync publishes a
/// record's events on its id's channel, and a relationship's on both its ends').
public enum AppEventRouting: Sendable, Hashable, Codable {
    /// Each stored record's id channel: fine for a few hundred records.
    case idChannels
    /// One wildcard subscription, `prefix.*`: every record's id is `prefix.<something>`
    /// (records this replica creates get such ids). The token needs `read` on `prefix.*`.
    case wildcard(prefix: String)
    /// A relationship's events arrive on its ends' channels, which the replica already follows
    /// for the end classes (or for the chat's users and channels).
    case ends
}

/// A write's precondition for an ``AppClass``.
public enum AppConcurrency: String, Sendable, Hashable, Codable {
    /// `If-Match` with the eTag the write was based on: any other change in between is a
    /// conflict, resolved by the class's policy.
    case eTag
    /// A `test` of each touched field's earlier value, without `If-Match`: edits of other fields
    /// in between merge on the server; only an edit of the same field is a conflict.
    case touchedFields
}

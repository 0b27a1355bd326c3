import Foundation

/// An App Context object that the server versions with `updated` and `eTag`.
public protocol VersionedObject {
    /// When the server last changed the object.
    var updated: ISOTimestamp? { get }
    /// The server's version tag.
    var eTag: String? { get }
}

/// What to do with an incoming version of an object that is already stored: the version rule.
///
/// This file owns the rule, in its two forms: ``init(incoming:stored:)`` in Swift (real-time
/// changesets, `VersionedObject.decision(replacing:)`) and `sqlApplies(table:)`, the same rule
/// as the condition of the store's upserts. The store's tests run one table of cases through both.
public enum VersionDecision: Hashable, Sendable {
    /// Write it: it is newer (or the stored one has no version).
    case apply
    /// Same eTag: nothing changed.
    case unchanged
    /// Older than the stored one: keep the stored one.
    case stale

    /// The rule every object write follows: equal eTag → unchanged, older `updated` → stale,
    /// otherwise apply. An object without `updated` never replaces one that has it; two missing
    /// eTags are not equal.
    ///
    /// ```swift
    /// VersionDecision(incoming: (updated: newer, eTag: "B"), stored: (updated: older, eTag: "A"))   // .apply
    /// ```
    public init(incoming: (updated: ISOTimestamp?, eTag: String?), stored: (updated: ISOTimestamp?, eTag: String?)) {
        if let eTag = incoming.eTag, eTag == stored.eTag {
            self = .unchanged
            return
        }
        switch (incoming.updated, stored.updated) {
        case (_, nil): self = .apply
        case (nil, _?): self = .stale
        case (let incoming?, let existing?): self = incoming < existing ? .stale : .apply
        }
    }

    /// The same rule in SQL, as the `WHERE` of an `INSERT ... ON CONFLICT DO UPDATE` into `table`
    /// (columns `etag` and `updated_ns`, the timestamp in nanoseconds): true exactly when
    /// ``init(incoming:stored:)`` says ``apply``.
    package static func sqlApplies(table: String) -> String {
        """
        (excluded.etag IS NULL OR \(table).etag IS NOT excluded.etag)
            AND (\(table).updated_ns IS NULL
                 OR (excluded.updated_ns IS NOT NULL AND excluded.updated_ns >= \(table).updated_ns))
        """
    }
}

extension VersionedObject {
    /// What writing `self` over `stored` does (``VersionDecision/init(incoming:stored:)``).
    public func decision(replacing stored: some VersionedObject) -> VersionDecision {
        VersionDecision(incoming: (updated, eTag), stored: (stored.updated, stored.eTag))
    }
}

/// One field of a real-time changeset: absent (unchanged) or present with a value or explicit null.
public enum FieldUpdate<Value: Hashable & Sendable>: Hashable, Sendable {
    /// The key was absent: keep the stored value.
    case unchanged
    /// The key was present; nil means an explicit `null` (clear the field).
    case set(Value?)

    /// The stored value after applying this update.
    public func applied(to current: Value?) -> Value? {
        switch self {
        case .unchanged: current
        case .set(let value): value
        }
    }
}

extension KeyedDecodingContainer {
    /// Reads `key` as a ``FieldUpdate``: absent → `.unchanged`, `null` → `.set(nil)`.
    public func decodeUpdate<T: Decodable & Hashable & Sendable>(_ type: T.Type, forKey key: Key) throws
        -> FieldUpdate<T>
    {
        guard contains(key) else { return .unchanged }
        if try decodeNil(forKey: key) { return .set(nil) }
        return .set(try decode(T.self, forKey: key))
    }
}

extension KeyedEncodingContainer {
    /// Writes a ``FieldUpdate``: `.unchanged` writes nothing, `.set(nil)` writes `null`.
    public mutating func encodeUpdate<T: Encodable & Hashable & Sendable>(_ update: FieldUpdate<T>, forKey key: Key)
        throws
    {
        switch update {
        case .unchanged: break
        case .set(nil): try encodeNil(forKey: key)
        case .set(let value?): try encode(value, forKey: key)
        }
    }
}

import Foundation

/// An App Context object that the server versions with `updated` and `eTag`.
public protocol VersionedObject {
    /// When the server last changed the object.
    var updated: ISOTimestamp? { get }
    /// The server's version tag.
    var eTag: String? { get }
}

/// What to do with an incoming version of an object that is already stored.
public enum VersionDecision: Hashable, Sendable {
    /// Write it: it is newer (or the stored one has no version).
    case apply
    /// Same eTag: nothing changed.
    case unchanged
    /// Older than the stored one: keep the stored one.
    case stale
}

extension VersionedObject {
    /// The rule every object write follows: equal eTag → unchanged, older `updated` → stale,
    /// otherwise apply. An object without `updated` never replaces one that has it.
    public func decision(replacing stored: some VersionedObject) -> VersionDecision {
        if let eTag, eTag == stored.eTag { return .unchanged }
        switch (updated, stored.updated) {
        case (_, nil): return .apply
        case (nil, _?): return .stale
        case (let incoming?, let existing?): return incoming < existing ? .stale : .apply
        }
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

import Foundation

/// The app's own type for an entity's `custom` field.
///
/// PubNub App Context stores `custom` as a flat JSON object of scalars. Apps that want typed
/// custom data declare a `Codable` struct and plug it in through ``ChatCustomData``; the default
/// is ``FlatCustom``, a validated dictionary.
public protocol CustomData: Codable, Hashable, Sendable {
    /// The avatar URL kept in `custom.profileUrl` (PubNub channels have no `profileUrl` field of
    /// their own). Types that do not carry one leave the default, which is always nil.
    var profileUrl: String? { get set }

    /// Reads custom data from already-parsed JSON. The default goes through `Codable`; the
    /// built-in types read the value directly (history ingest calls this once per message).
    static func fromJSON(_ value: JSONValue) throws -> Self
}

extension CustomData {
    /// Default: decode through `Codable`.
    public static func fromJSON(_ value: JSONValue) throws -> Self {
        try value.decode(as: Self.self)
    }

    /// Default: this custom type carries no profile URL; setting one is ignored.
    public var profileUrl: String? {
        get { nil }
        set {}
    }
}

/// The set of custom types an app uses, one per entity kind (the seed's `ChatCustomData`).
///
/// ```swift
/// enum MyChat: ChatCustomData {
///     typealias User = MyUserCustom
/// }
/// let store = try ChatStore<MyChat>.open(...)
/// ```
public protocol ChatCustomData: Sendable {
    /// Custom data of users.
    associatedtype User: CustomData = FlatCustom
    /// Custom data of channels.
    associatedtype Channel: CustomData = FlatCustom
    /// Custom data of memberships.
    associatedtype Member: CustomData = FlatCustom
    /// Custom data inside message payloads.
    associatedtype Message: CustomData = FlatCustom
}

/// Every entity uses ``FlatCustom``.
public enum DefaultChatCustom: ChatCustomData {}

/// One scalar value of a flat `custom` object.
public enum CustomScalar: Hashable, Sendable, Codable {
    /// A string.
    case string(String)
    /// A whole number.
    case int(Int64)
    /// A number with a fraction.
    case double(Double)
    /// A boolean.
    case bool(Bool)
    /// An explicit `null`.
    case null

    /// Decodes a scalar; arrays and objects throw ``ModelValidationError/nestedCustomValue(field:key:)``
    /// (with an empty key: the caller that knows the key reports it).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            let key = decoder.codingPath.last?.stringValue ?? ""
            throw ModelValidationError.nestedCustomValue(field: "custom", key: key)
        }
    }

    /// Encodes the scalar as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// The string inside a `.string`, or nil.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The scalar as a ``JSONValue``.
    public var jsonValue: JSONValue {
        switch self {
        case .string(let value): .string(value)
        case .int(let value): .int(value)
        case .double(let value): .double(value)
        case .bool(let value): .bool(value)
        case .null: .null
        }
    }

    /// Converts a ``JSONValue``; arrays and objects throw, naming `key`.
    public init(_ value: JSONValue, key: String) throws(ModelValidationError) {
        switch value {
        case .null: self = .null
        case .bool(let v): self = .bool(v)
        case .int(let v): self = .int(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .array, .object: throw .nestedCustomValue(field: "custom", key: key)
        }
    }
}

extension CustomScalar: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral
{
    /// A `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
}

/// The default custom data: a flat JSON object of scalars, as PubNub requires.
///
/// Decoding a nested object or array throws ``ModelValidationError/nestedCustomValue(field:key:)``.
public struct FlatCustom: CustomData, ExpressibleByDictionaryLiteral {
    /// The key/value pairs.
    public var values: [String: CustomScalar]

    /// Custom data with the given values.
    public init(_ values: [String: CustomScalar] = [:]) {
        self.values = values
    }

    /// Custom data from a dictionary literal.
    public init(dictionaryLiteral elements: (String, CustomScalar)...) {
        self.values = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }

    /// Reads a flat JSON object directly (no encode/decode round trip).
    public static func fromJSON(_ value: JSONValue) throws -> FlatCustom {
        guard case .object(let object) = value else { return try value.decode(as: FlatCustom.self) }
        return try FlatCustom(validating: object)
    }

    /// Validates that `object` is flat and converts it.
    public init(validating object: [String: JSONValue]) throws(ModelValidationError) {
        var values: [String: CustomScalar] = [:]
        for (key, value) in object {
            values[key] = try CustomScalar(value, key: key)
        }
        self.values = values
    }

    /// Reads or writes one key.
    public subscript(key: String) -> CustomScalar? {
        get { values[key] }
        set { values[key] = newValue }
    }

    /// Whether there are no keys.
    public var isEmpty: Bool { values.isEmpty }

    /// The values as a JSON object (what ``encode(to:)`` writes).
    public var jsonValue: JSONValue {
        .object(values.mapValues(\.jsonValue))
    }

    /// `custom.profileUrl`, the avatar URL the seed's channel payload keeps in custom data.
    public var profileUrl: String? {
        get { values["profileUrl"]?.stringValue }
        set { values["profileUrl"] = newValue.map(CustomScalar.string) }
    }

    /// Decodes a flat JSON object; nested values throw, naming their key.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode([String: JSONValue].self)
        try self.init(validating: raw)
    }

    /// Encodes the JSON object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }
}

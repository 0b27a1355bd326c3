import Foundation

/// Any JSON value, kept exactly as it was decoded so that it can be encoded back unchanged.
///
/// Used for a message's free-form `content`, for publish `meta` and for presence state.
/// Integers stay integers (`1` never becomes `1.0`) and object key order does not matter
/// for equality, as in JSON itself.
public enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without a fraction or exponent that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Whether this value is `null`.
    public var isNull: Bool { self == .null }

    /// The string inside a `.string`, or nil.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The elements of an `.array`, or nil.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members of an `.object`, or nil.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Decodes a JSON document held in `data` (the fast `parse(_:)`, then `JSONDecoder` for
    /// what it leaves, which also names the error of invalid JSON).
    public init(jsonData data: Data) throws {
        if let value = Self.parse(data) {
            self = value
        } else {
            self = try JSONDecoder().decode(JSONValue.self, from: data)
        }
    }

    /// Encodes this value as a compact JSON document with sorted keys (stable output): the fast
    /// `compactJSONBytes()`, then `JSONEncoder` for what it leaves (which throws for a number
    /// that is not finite).
    public func jsonData() throws -> Data {
        if let bytes = compactJSONBytes() { return Data(bytes) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// The compact JSON text of this value, with sorted keys.
    public func jsonString() throws -> String {
        if let bytes = compactJSONBytes() { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: try jsonData(), as: UTF8.self)
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value; integers that fit in `Int64` decode as `.int`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Each failed attempt costs a thrown DecodingError, so the common kinds go first: strings
        // (most leaves) and objects (most containers). Int64 before Double keeps integers exact.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else {
            self = .array(try container.decode([JSONValue].self))
        }
    }

    /// Encodes the value as the JSON it stands for.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// A `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An `.int`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `.null`.
    public init(nilLiteral: ()) { self = .null }
    /// An `.array`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An `.object`; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

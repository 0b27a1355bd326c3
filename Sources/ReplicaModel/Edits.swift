import Foundation

/// `JSONValue` as custom data, so that wire bodies can carry custom values the outbox stored as JSON.
extension JSONValue: CustomData {
    /// The value itself.
    public static func fromJSON(_ value: JSONValue) throws -> JSONValue { value }
}

extension JSONValue {
    /// The JSON form of any encodable value.
    public init(encoding value: some Encodable) throws {
        if let json = value as? JSONValue {
            self = json
        } else if let flat = value as? FlatCustom {
            self = flat.jsonValue
        } else {
            self = try JSONValue(jsonData: JSONEncoder().encode(value))
        }
    }

    /// Decodes this JSON as `T`.
    public func decode<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: jsonData())
    }
}

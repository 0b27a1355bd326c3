import Foundation
import ReplicaModel

/// Decodes `json` as `T` with a plain `JSONDecoder`, as the store and the wire layer do.
func decodeJSON<T: Decodable>(_ type: T.Type, from json: String) throws -> T {
    try JSONDecoder().decode(T.self, from: Data(json.utf8))
}

/// Encodes `value` with a plain `JSONEncoder`.
func encodeJSON<T: Encodable>(_ value: T) throws -> Data {
    try JSONEncoder().encode(value)
}

/// Parses JSON text into a `JSONValue`, which compares objects without regard to key order and
/// keeps `1`, `1.5` and `true` apart (unlike `NSNumber`).
func json(_ text: String) throws -> JSONValue {
    try JSONValue(jsonData: Data(text.utf8))
}

/// Parses JSON data into a `JSONValue`.
func json(_ data: Data) throws -> JSONValue {
    try JSONValue(jsonData: data)
}

/// The keys of a JSON object document, or nil when the document is not an object.
func objectKeys(_ data: Data) throws -> Set<String>? {
    guard case .object(let members) = try JSONValue(jsonData: data) else { return nil }
    return Set(members.keys)
}

/// Shorthand for a timestamp literal that must parse.
func ts(_ text: String) throws -> ISOTimestamp {
    try ISOTimestamp(parsing: text)
}

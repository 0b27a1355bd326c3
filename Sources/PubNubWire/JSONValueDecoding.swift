import Foundation
import ReplicaModel

/// A wire answer that can read itself from parsed JSON: ``PubNubClient`` parses such answers with
/// the fast ``ReplicaModel/JSONValue/parse(_:)`` and reads them field by field, and uses
/// `JSONDecoder` only when either step gives up (an odd but valid answer decodes the same; an
/// invalid one gets `JSONDecoder`'s error).
protocol JSONValueDecodable: Decodable {
    /// The value, or nil when anything is not as ``Decodable/init(from:)`` expects.
    init?(json: JSONValue)
}

extension Timetoken {
    /// A timetoken from parsed JSON as ``init(from:)`` reads it (a string of digits or an
    /// unsigned integer), or nil.
    init?(json: JSONValue) {
        switch json {
        case .string(let text):
            guard let value = try? Timetoken(parsing: text) else { return nil }
            self = value
        case .int(let value):
            guard let raw = UInt64(exactly: value) else { return nil }
            self.init(rawValue: raw)
        default:
            return nil
        }
    }
}

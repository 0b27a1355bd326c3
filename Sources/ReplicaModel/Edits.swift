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

/// A local edit of a membership: the values given replace the stored ones; nil leaves a field as it is.
public struct MemberEdit<Custom: CustomData>: Hashable, Sendable {
    /// Free-form status.
    public var status: String?
    /// Object type.
    public var type: String?
    /// Custom data (replaces the whole object).
    public var custom: Custom?

    /// An edit.
    public init(status: String? = nil, type: String? = nil, custom: Custom? = nil) {
        self.status = status
        self.type = type
        self.custom = custom
    }

    /// The given fields by wire name.
    public func fields() throws -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        if let status { fields["status"] = .string(status) }
        if let type { fields["type"] = .string(type) }
        if let custom { fields["custom"] = try JSONValue(encoding: custom) }
        return fields
    }

    /// `member` with wire-named `fields` applied.
    public static func apply<C: ChatCustomData>(_ fields: [String: JSONValue], to member: ChatMember<C>) throws
        -> ChatMember<C> where C.Member == Custom
    {
        var member = member
        for (key, value) in fields {
            switch key {
            case "status": member.status = value.stringValue
            case "type": member.type = value.stringValue
            case "custom": member.custom = value.isNull ? nil : try value.decode(as: Custom.self)
            default: break
            }
        }
        return member
    }
}

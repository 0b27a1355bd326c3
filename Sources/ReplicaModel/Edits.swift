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

/// A local edit of a user's metadata: only the fields set here change (`.set(nil)` clears one).
public struct UserEdit<Custom: CustomData>: Hashable, Sendable {
    /// Display name.
    public var name: FieldUpdate<String> = .unchanged
    /// Object type.
    public var type: FieldUpdate<String> = .unchanged
    /// Free-form status.
    public var status: FieldUpdate<String> = .unchanged
    /// An id in another system.
    public var externalId: FieldUpdate<String> = .unchanged
    /// Avatar URL.
    public var profileUrl: FieldUpdate<String> = .unchanged
    /// Email address.
    public var email: FieldUpdate<String> = .unchanged
    /// Custom data (replaces the whole object, as PubNub does).
    public var custom: FieldUpdate<Custom> = .unchanged

    /// An edit that changes nothing yet.
    public init() {}

    /// The changed fields by wire name; a cleared field is JSON `null`.
    public func fields() throws -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        EditFields.put(name, "name", into: &fields)
        EditFields.put(type, "type", into: &fields)
        EditFields.put(status, "status", into: &fields)
        EditFields.put(externalId, "externalId", into: &fields)
        EditFields.put(profileUrl, "profileUrl", into: &fields)
        EditFields.put(email, "email", into: &fields)
        try EditFields.put(custom, "custom", into: &fields)
        return fields
    }

    /// `user` with wire-named `fields` applied (unknown names are ignored).
    public static func apply(_ fields: [String: JSONValue], to user: ChatUser<Custom>) throws -> ChatUser<Custom> {
        var user = user
        for (key, value) in fields {
            switch key {
            case "name": user.name = value.stringValue
            case "type": user.type = FieldSchema.type(value.stringValue)
            case "status": user.status = value.stringValue
            case "externalId": user.externalId = value.stringValue
            case "profileUrl": user.profileUrl = value.stringValue
            case "email": user.email = value.stringValue
            case "custom": user.custom = value.isNull ? nil : try value.decode(as: Custom.self)
            default: break
            }
        }
        return user
    }
}

/// A local edit of a channel's metadata: only the fields set here change (`.set(nil)` clears one).
public struct ChannelEdit<Custom: CustomData>: Hashable, Sendable {
    /// Display name.
    public var name: FieldUpdate<String> = .unchanged
    /// The description (`description` on the wire).
    public var details: FieldUpdate<String> = .unchanged
    /// Object type.
    public var type: FieldUpdate<String> = .unchanged
    /// Free-form status.
    public var status: FieldUpdate<String> = .unchanged
    /// Custom data (replaces the whole object, as PubNub does).
    public var custom: FieldUpdate<Custom> = .unchanged

    /// An edit that changes nothing yet.
    public init() {}

    /// The changed fields by wire name; a cleared field is JSON `null`.
    public func fields() throws -> [String: JSONValue] {
        var fields: [String: JSONValue] = [:]
        EditFields.put(name, "name", into: &fields)
        EditFields.put(details, "description", into: &fields)
        EditFields.put(type, "type", into: &fields)
        EditFields.put(status, "status", into: &fields)
        try EditFields.put(custom, "custom", into: &fields)
        return fields
    }

    /// `channel` with wire-named `fields` applied (unknown names are ignored).
    public static func apply(_ fields: [String: JSONValue], to channel: ChatChannel<Custom>) throws
        -> ChatChannel<Custom>
    {
        var channel = channel
        for (key, value) in fields {
            switch key {
            case "name": channel.name = value.stringValue
            case "description": channel.details = value.stringValue
            case "type": channel.type = FieldSchema.type(value.stringValue)
            case "status": channel.status = value.stringValue
            case "custom": channel.custom = value.isNull ? nil : try value.decode(as: Custom.self)
            default: break
            }
        }
        return channel
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

enum EditFields {
    static func put(_ update: FieldUpdate<String>, _ key: String, into fields: inout [String: JSONValue]) {
        if case .set(let value) = update { fields[key] = value.map(JSONValue.string) ?? .null }
    }

    static func put<C: Encodable>(_ update: FieldUpdate<C>, _ key: String, into fields: inout [String: JSONValue]) throws {
        if case .set(let value) = update { fields[key] = try value.map { try JSONValue(encoding: $0) } ?? .null }
    }
}

import Foundation

/// The replicated fields of each App Context entity, by wire name, and the rule for an absent
/// `type`: the one schema that edits, change sets, three-way merge, probes and request building
/// share.
///
/// ```swift
/// FieldSchema.user          // ["name", "email", "externalId", "profileUrl", "type", "status", "custom"]
/// FieldSchema.type(nil)     // "default"
/// ```
public enum FieldSchema {
    /// A user's fields, from ``ChatUser``'s declaration (``ReplicatedEntity/fields``).
    public static let user = ChatUser<JSONValue>.wireNames
    /// A channel's fields (`description` is ``ChatChannel/details`` in Swift), from ``ChatChannel``'s declaration.
    public static let channel = ChatChannel<JSONValue>.wireNames
    /// A membership's fields, from ``ChatMember``'s declaration. PubNub writes the three together.
    public static let membership = ChatMember<DefaultChatCustom>.wireNames

    /// The type PubNub gives a user or channel that has none.
    public static let defaultType = "default"

    /// A user's or channel's type as stored: an absent (or null) type is ``defaultType``.
    public static func type(_ value: String?) -> String { value ?? defaultType }

    /// A wire value of a user's or channel's field as it compares with a stored one: an absent
    /// `type` is ``defaultType``, any other absent field is JSON null.
    public static func comparable(_ field: String, _ value: JSONValue?) -> JSONValue {
        guard field == "type" else { return value ?? .null }
        if let value, value != .null { return value }
        return .string(defaultType)
    }
}

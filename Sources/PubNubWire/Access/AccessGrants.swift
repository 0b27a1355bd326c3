import Foundation

/// Access Manager's permission bits, as a token's resources and patterns carry them.
///
/// A token grants each channel, channel group or user (uuid) a set of these; each PubNub endpoint
/// needs one of them on the resources it touches (``AccessNeed``). The raw values are the wire's:
/// `read` 1, `write` 2, `manage` 4, `delete` 8, `create` 16, `get` 32, `update` 64, `join` 128
/// (so "all but create" is 239).
///
/// ```swift
/// let bits: AccessPermissions = [.read, .write]   // 3, what a chat member gets on a channel
/// bits.contains(.write)                           // true
/// bits.names                                      // ["read", "write"]
/// ```
public struct AccessPermissions: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The bits as the token carries them.
    public let rawValue: UInt32
    /// Permissions from their bits (unknown bits are kept, and never grant anything named here).
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Subscribe, history, presence, listing files and reactions.
    public static let read = AccessPermissions(rawValue: 1)
    /// Publish, signal, send a file, add a reaction.
    public static let write = AccessPermissions(rawValue: 2)
    /// Set or remove a channel's members; manage a channel group.
    public static let manage = AccessPermissions(rawValue: 4)
    /// Delete messages, files, reactions and objects.
    public static let delete = AccessPermissions(rawValue: 8)
    /// Create (reserved by Access Manager; no endpoint pnreplicate uses needs it).
    public static let create = AccessPermissions(rawValue: 16)
    /// Read App Context objects (users, channels, members, memberships).
    public static let get = AccessPermissions(rawValue: 32)
    /// Write App Context objects.
    public static let update = AccessPermissions(rawValue: 64)
    /// Join channels (set or remove a user's memberships).
    public static let join = AccessPermissions(rawValue: 128)

    /// Every named permission with its name, in bit order.
    public static let named: [(name: String, permission: AccessPermissions)] = [
        ("read", .read), ("write", .write), ("manage", .manage), ("delete", .delete),
        ("create", .create), ("get", .get), ("update", .update), ("join", .join),
    ]

    /// The names of the permissions set, in bit order (`["read", "write"]`).
    public var names: [String] { Self.named.filter { contains($0.permission) }.map(\.name) }

    /// The names joined by `+` (`read+write`), or `none`.
    public var description: String { names.isEmpty ? "none" : names.joined(separator: "+") }
}

/// The three kinds of resources a token names: channels (`chan`), channel groups (`grp`) and
/// users (`uuid`, App Context's user ids).
public enum AccessResourceKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A channel (`chan` in a token).
    case channel
    /// A channel group (`grp`).
    case group
    /// A user id (`uuid`).
    case uuid

    /// The key of this kind in a token's `res` and `pat` maps.
    public var tokenKey: String {
        switch self {
        case .channel: "chan"
        case .group: "grp"
        case .uuid: "uuid"
        }
    }
}

/// What a token grants: permissions per named resource, per pattern (a regular expression over
/// names) and per category (a whole listing: every channel's or every user's metadata).
///
/// The one place that decides whether a grant covers a need: the client's pre-check (an op the
/// token cannot allow is reported before it is sent) and the simulator's enforcement both ask
/// ``permissions(_:name:)``. A name's permissions are the union of its exact entry and of every
/// pattern that matches the whole name.
///
/// ```swift
/// var grants = AccessGrants()
/// grants.resources[.channel] = ["room-1": [.read, .write]]
/// grants.patterns[.channel] = ["^thread-.*$": .read]
/// grants.permissions(.channel, name: "thread-7")   // [.read]
/// ```
public struct AccessGrants: Sendable, Hashable {
    /// Exact resources: kind, then name, then permissions.
    public var resources: [AccessResourceKind: [String: AccessPermissions]]
    /// Patterns: kind, then regular expression, then permissions.
    public var patterns: [AccessResourceKind: [String: AccessPermissions]]
    /// Categories (`cat`): listing every channel's (`.channel`) or user's (`.uuid`) metadata.
    public var categories: [AccessResourceKind: AccessPermissions]

    /// Grants (nothing granted by default).
    public init(
        resources: [AccessResourceKind: [String: AccessPermissions]] = [:],
        patterns: [AccessResourceKind: [String: AccessPermissions]] = [:],
        categories: [AccessResourceKind: AccessPermissions] = [:]
    ) {
        self.resources = resources
        self.patterns = patterns
        self.categories = categories
    }

    /// The longest pattern evaluated; a longer one grants nothing (a token's patterns are
    /// compiled on this device, and a hostile one must not cost more than a bounded match).
    public static let maxPatternLength = 256

    /// What `name` of `kind` may do: its exact entry united with every matching pattern.
    public func permissions(_ kind: AccessResourceKind, name: String) -> AccessPermissions {
        var granted = resources[kind]?[name] ?? []
        for (pattern, bits) in patterns[kind] ?? [:] where !granted.isSuperset(of: bits) {
            if Self.matches(pattern: pattern, name: name) { granted.formUnion(bits) }
        }
        return granted
    }

    /// Whether `requirement` holds.
    public func allows(_ requirement: AccessRequirement) -> Bool {
        guard let name = requirement.name else {
            return categories[requirement.kind]?.isSuperset(of: requirement.permission) ?? false
        }
        return permissions(requirement.kind, name: name).isSuperset(of: requirement.permission)
    }

    /// Whether `pattern` (PubNub's patterns are regular expressions, usually anchored, `^thread-.*$`)
    /// matches the whole of `name`. An invalid or overlong pattern matches nothing.
    static func matches(pattern: String, name: String) -> Bool {
        guard pattern.utf8.count <= maxPatternLength,
            let regex = try? NSRegularExpression(pattern: pattern)
        else { return false }
        let range = NSRange(name.startIndex..., in: name)
        guard let match = regex.firstMatch(in: name, options: [.anchored], range: range) else { return false }
        return match.range == range
    }
}

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

/// The kinds of resources a token names: channels (`chan`), channel groups (`grp`), users
/// (`uuid`, App Context's user ids), and DataSync's users (`usr`), memberships, entities and
/// relationships (`datasync:memberships`, `datasync:entities`, `datasync:relationships`; the
/// protocol reference for DataSync, §13). DataSync's channels are ``channel``: one grant covers a
/// channel's App Context metadata and its DataSync record.
public enum AccessResourceKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A channel (`chan` in a token).
    case channel
    /// A channel group (`grp`).
    case group
    /// A user id (`uuid`).
    case uuid
    /// A DataSync user (`usr`; `users` in a grant request).
    case user
    /// A DataSync membership, by the membership's own id (`datasync:memberships`).
    case dataSyncMembership
    /// A DataSync entity of an app's class (`datasync:entities`).
    case dataSyncEntity
    /// A DataSync relationship of an app's class (`datasync:relationships`).
    case dataSyncRelationship

    /// The key of this kind in a token's `res` and `pat` maps.
    public var tokenKey: String {
        switch self {
        case .channel: "chan"
        case .group: "grp"
        case .uuid: "uuid"
        case .user: "usr"
        case .dataSyncMembership: "datasync:memberships"
        case .dataSyncEntity: "datasync:entities"
        case .dataSyncRelationship: "datasync:relationships"
        }
    }

    /// The key of this kind in a grant request's `resources` and `patterns` (and in
    /// ``AccessToken/parsedJSON``): `channels`, `groups`, `uuids`, `users`, `datasync:memberships`…
    public var grantKey: String {
        switch self {
        case .channel: "channels"
        case .group: "groups"
        case .uuid: "uuids"
        case .user: "users"
        case .dataSyncMembership, .dataSyncEntity, .dataSyncRelationship: tokenKey
        }
    }

    /// How a requirement names the kind: `channel`, `group`, `user` (App Context's), `DataSync
    /// user`, `membership`, `entity`, `relationship`.
    public var noun: String {
        switch self {
        case .channel: "channel"
        case .group: "group"
        case .uuid: "user"
        case .user: "DataSync user"
        case .dataSyncMembership: "membership"
        case .dataSyncEntity: "entity"
        case .dataSyncRelationship: "relationship"
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

    /// The longest pattern evaluated; a longer one is not evaluated (a token's patterns are
    /// compiled on this device, and a hostile one must not cost more than a bounded match).
    public static let maxPatternLength = 256

    /// What `name` of `kind` may certainly do: its exact entry united with every matching pattern
    /// this client evaluates (``isEvaluable(pattern:)``).
    public func permissions(_ kind: AccessResourceKind, name: String) -> AccessPermissions {
        var granted = resources[kind]?[name] ?? []
        for (pattern, bits) in patterns[kind] ?? [:] where !granted.isSuperset(of: bits) && Self.isEvaluable(pattern: pattern) {
            if Self.matches(pattern: pattern, name: name) { granted.formUnion(bits) }
        }
        return granted
    }

    /// The permissions of `name` that only patterns this client will not evaluate could grant
    /// (``isEvaluable(pattern:)``): neither granted nor refused here; the server decides.
    public func undecided(_ kind: AccessResourceKind, name: String) -> AccessPermissions {
        var bits: AccessPermissions = []
        for (pattern, granted) in patterns[kind] ?? [:] where !Self.isEvaluable(pattern: pattern) { bits.formUnion(granted) }
        return bits.subtracting(permissions(kind, name: name))
    }

    /// Whether `requirement` holds: ``AccessVerdict/granted``, ``AccessVerdict/notGranted``, or
    /// ``AccessVerdict/undecided`` when only a pattern this client will not evaluate could grant
    /// it (the request should go, and the server decide: refusing it would refuse what the
    /// server may grant).
    public func verdict(_ requirement: AccessRequirement) -> AccessVerdict {
        guard let name = requirement.name else {
            return categories[requirement.kind]?.isSuperset(of: requirement.permission) ?? false ? .granted : .notGranted
        }
        if permissions(requirement.kind, name: name).isSuperset(of: requirement.permission) { return .granted }
        return undecided(requirement.kind, name: name).isDisjoint(with: requirement.permission) ? .notGranted : .undecided
    }

    /// Whether `requirement` certainly holds (``verdict(_:)`` is ``AccessVerdict/granted``).
    public func allows(_ requirement: AccessRequirement) -> Bool {
        verdict(requirement) == .granted
    }

    /// Whether `pattern` (PubNub's patterns are regular expressions, usually anchored, `^thread-.*$`)
    /// matches the whole of `name`. An invalid pattern matches nothing; call it only for patterns
    /// that ``isEvaluable(pattern:)`` accepts.
    static func matches(pattern: String, name: String) -> Bool {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return false }
        let range = NSRange(name.startIndex..., in: name)
        guard let match = regex.firstMatch(in: name, options: [.anchored], range: range) else { return false }
        return match.range == range
    }

    /// Whether this client evaluates `pattern`: at most ``maxPatternLength`` bytes, and of a shape
    /// whose match costs time bounded by a polynomial of low degree in the name's length
    /// (`PatternShape`). `NSRegularExpression` backtracks with no step limit on Linux, so a
    /// token's `(a+)+$` would cost seconds of CPU per request, growing exponentially with the
    /// name: such a pattern is not evaluated, and what only it could grant is undecided.
    public static func isEvaluable(pattern: String) -> Bool {
        pattern.utf8.count <= maxPatternLength && PatternShape(pattern).isBounded
    }
}

/// What a token's pattern allows for a requirement (``AccessGrants/verdict(_:)``).
public enum AccessVerdict: Sendable, Hashable {
    /// Granted.
    case granted
    /// Not granted.
    case notGranted
    /// Only a pattern this client will not evaluate could grant it: the server decides.
    case undecided
}

/// The static check of a regular expression's shape that keeps backtracking bounded
/// (``AccessGrants/isEvaluable(pattern:)``). Refused: a repeated group that holds any quantifier
/// (`?` included) or an alternation (`(a+)+`, `(a|aa)+`, `(\w+\s?)+`, `(a?a?)+`: exponential), a
/// backreference, more than ``maxVariableQuantifiers`` quantifiers of variable count (`*`, `+`,
/// `{n,}`, `{n,m}` with `m > n + 1`: `.*.*.*.*` and `.{0,99}` eight times are polynomials of that
/// degree), and the ICU syntax this reader does not model (`\Q…\E`, `\c`, `(?#…)`, the `x` flag,
/// nested classes), which could hide a shape from it. Repeated means any quantifier but `?`,
/// `{0,1}` and `{1}`. Conservative: a safe pattern may be refused (it is then undecided, never
/// refused access).
struct PatternShape {
    /// The most quantifiers of variable count a pattern may hold.
    static let maxVariableQuantifiers = 3

    let isBounded: Bool

    init(_ pattern: String) {
        isBounded = Self.check(Array(pattern.unicodeScalars))
    }

    /// What a group holds so far.
    private struct Frame {
        var quantifier = false
        var alternation = false
    }

    private static func check(_ p: [Unicode.Scalar]) -> Bool {
        var stack = [Frame()]
        var variable = 0
        // What the last atom was: a group just closed (its frame), or anything else.
        var lastGroup: Frame?
        var i = 0
        while i < p.count {
            let c = p[i]
            switch c {
            case "\\":
                guard i + 1 < p.count else { return false }
                let next = p[i + 1]
                if ("1"..."9").contains(next) || ["k", "Q", "E", "c"].contains(next) {
                    return false  // backreferences; quoting and control escapes are not modelled
                }
                if ["p", "P", "x", "N"].contains(next), i + 2 < p.count, p[i + 2] == "{" {
                    // One atom: `\p{L}`, `\x{1F600}`, `\N{name}`.
                    guard let close = p[(i + 2)...].firstIndex(of: "}") else { return false }
                    i = close + 1
                } else {
                    i += 2
                }
                lastGroup = nil
                continue
            case "[":
                // A character class: skip to its closing bracket (a leading `]` or `^]` is literal).
                var j = i + 1
                if j < p.count, p[j] == "^" { j += 1 }
                if j < p.count, p[j] == "]" { j += 1 }
                while j < p.count, p[j] != "]" {
                    if p[j] == "\\" {
                        guard j + 1 < p.count, !["Q", "E", "c"].contains(p[j + 1]) else { return false }
                        j += 1
                    } else if p[j] == "[" {
                        return false  // nested classes and set operations: not read here
                    }
                    j += 1
                }
                guard j < p.count else { return false }
                i = j + 1
                lastGroup = nil
                continue
            case "(":
                lastGroup = nil
                guard i + 1 < p.count, p[i + 1] == "?" else {
                    stack.append(Frame())
                    i += 1
                    continue
                }
                // `(?…`: the kind of group, or inline flags.
                guard i + 2 < p.count else { return false }
                switch p[i + 2] {
                case ":", "=", "!", ">":
                    stack.append(Frame())
                    i += 3
                case "<":
                    guard i + 3 < p.count else { return false }
                    if p[i + 3] == "=" || p[i + 3] == "!" {
                        i += 4
                    } else {
                        guard let close = p[(i + 3)...].firstIndex(of: ">") else { return false }
                        i = close + 1
                    }
                    stack.append(Frame())
                default:
                    // Flags (`(?i)`, `(?i:…)`, `(?-m)`); a comment `(?#` or the `x` flag is refused.
                    var j = i + 2
                    while j < p.count, p[j] != ")", p[j] != ":" {
                        guard ("a"..."z").contains(p[j]) || ("A"..."Z").contains(p[j]) || p[j] == "-", p[j] != "x" else { return false }
                        j += 1
                    }
                    guard j < p.count else { return false }
                    if p[j] == ":" { stack.append(Frame()) }
                    i = j + 1
                }
                continue
            case ")":
                guard stack.count > 1 else { return false }
                let closed = stack.removeLast()
                stack[stack.count - 1].quantifier = stack[stack.count - 1].quantifier || closed.quantifier
                stack[stack.count - 1].alternation = stack[stack.count - 1].alternation || closed.alternation
                lastGroup = closed
                i += 1
                continue
            case "|":
                stack[stack.count - 1].alternation = true
                i += 1
                lastGroup = nil
                continue
            case "*", "+", "?", "{":
                // How many times the atom may match: `low` to `high` (nil: no bound).
                var low = c == "+" ? 1 : 0
                var high: Int? = c == "?" ? 1 : nil
                var end = i + 1
                if c == "{" {
                    guard let close = p[(i + 1)...].firstIndex(of: "}") else { return false }
                    let body = String(String.UnicodeScalarView(p[(i + 1)..<close]))
                    let parts = body.split(separator: ",", omittingEmptySubsequences: false)
                    guard (1...2).contains(parts.count), let first = Int(parts[0]) else { return false }
                    low = first
                    if parts.count == 1 {
                        high = first
                    } else if parts[1].isEmpty {
                        high = nil
                    } else {
                        guard let last = Int(parts[1]), last >= first else { return false }
                        high = last
                    }
                    end = close + 1
                }
                if end < p.count, p[end] == "?" || p[end] == "+" { end += 1 }  // lazy or possessive
                let repeats = high.map { $0 > 1 } ?? true
                let quantifies = !(low == 1 && high == 1)
                if let group = lastGroup, repeats, group.quantifier || group.alternation { return false }
                if high.map({ $0 > low + 1 }) ?? true { variable += 1 }
                if quantifies { stack[stack.count - 1].quantifier = true }
                if variable > maxVariableQuantifiers { return false }
                lastGroup = nil
                i = end
                continue
            default:
                i += 1
                lastGroup = nil
            }
        }
        return stack.count == 1
    }
}

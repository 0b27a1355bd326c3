import Foundation
import ReplicaModel

/// An App Context `filter` expression, parsed once and then matched against each user, channel,
/// membership or member of a listing.
///
/// The simulator understands what PubNub's Chat SDK (kmp-chat) sends, such as
/// `!(channel.id LIKE 'PUBNUB_INTERNAL_MODERATION_*') && (channel.id == 'general')`. The grammar,
/// loosest binding first (so `!` binds tighter than `&&`, and `&&` tighter than `||`):
///
/// ```
/// filter     = or
/// or         = and { "||" and }
/// and        = unary { "&&" unary }
/// unary      = "!" unary | "(" or ")" | comparison
/// comparison = field op value
/// op         = "==" | "!=" | "<" | "<=" | ">" | ">=" | "LIKE"      (LIKE in any case)
/// value      = "'" chars "'" | '"' chars '"'     (a backslash takes the next character as is)
/// field      = [side "."] ("id" | "name" | "updated" | "type" | "status" | "custom." key)
/// ```
///
/// Which fields a filter may name depends on its ``Listing``: users and channels take the plain
/// fields; a user's memberships take the membership's own `status`, `type`, `updated` and
/// `custom.<key>`, and the channel's fields behind `channel.`; a channel's members the same with
/// `uuid.` for the user. Values compare as strings (ISO `updated` values order correctly), a
/// `custom` number or boolean as its JSON text. A field the item lacks satisfies only `!=`.
/// `LIKE` takes `*` as any run of characters, anywhere in the pattern.
///
/// Anything else is refused with a ``ParseError``: a filter over ``maxLength`` characters, one
/// nested (by `(` or `!`) deeper than ``maxDepth``, an unknown field, a stray character. The
/// listings answer a refused filter (a nil ``init(_:listing:)``) with PubNub's 400
/// `Invalid filter expression.`.
///
/// ## Topics
///
/// ### Parsing
///
/// - ``init(_:listing:)``
/// - ``init(parsing:listing:)``
/// - ``Listing``
/// - ``ParseError``
///
/// ### Matching
///
/// - ``matches(_:)``
/// - ``matches(id:fields:updated:)``
/// - ``matches(membership:other:otherObject:)``
/// - ``like(_:_:)``
struct ObjectFilter: Sendable {
    /// The listing a filter is read for: it decides which field names the filter may use.
    enum Listing: Sendable, Hashable {
        /// Users or channels (`/uuids`, `/channels`).
        case objects
        /// A user's memberships; the channel's fields are named `channel.<field>`.
        case memberships
        /// A channel's members; the user's fields are named `uuid.<field>`.
        case members
        /// A DataSync list: only `fields` (the system fields and the classes' properties) may be
        /// named; `AND` and `OR` are accepted beside `&&` and `||`, and a bare word (`true`,
        /// `700`) as a value, as PubNub's JS SDK sends them.
        case dataSync(fields: Set<String>)

        /// The prefix naming the other side of a membership; nil for users and channels.
        var side: String? {
            switch self {
            case .objects, .dataSync: nil
            case .memberships: "channel"
            case .members: "uuid"
            }
        }
    }

    /// Why a filter was refused. Offsets count characters from the start of the filter.
    enum ParseError: Error, Equatable, Sendable {
        /// The filter is longer than ``ObjectFilter/maxLength`` characters.
        case tooLong
        /// Parentheses or negations nest deeper than ``ObjectFilter/maxDepth`` at `offset`.
        case tooDeep(offset: Int)
        /// A character that starts no token.
        case unexpectedCharacter(Character, offset: Int)
        /// A quoted value with no closing quote.
        case unterminatedValue(offset: Int)
        /// Something other than what the grammar allows here (`expected` says what would be).
        case expected(String, offset: Int)
        /// A field the listing does not know.
        case unknownField(String, offset: Int)
    }

    /// A comparison operator.
    enum Operator: String, Sendable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case like = "LIKE"
    }

    /// A parsed filter: comparisons combined by `!`, `&&` and `||`.
    indirect enum Expression: Sendable, Equatable {
        /// `field op 'value'`; `field` is the path as written (`channel.id`, `custom.team`).
        case comparison(field: String, op: Operator, value: String)
        /// `!expression`.
        case not(Expression)
        /// Every term holds.
        case and([Expression])
        /// Some term holds.
        case or([Expression])
    }

    /// The longest filter accepted, in characters: room for the Chat SDK's `markAllMessagesAsRead`,
    /// which names up to 100 channels of up to 92 characters (`channel.id == '…' || …`, about
    /// 11,500), while bounding what a hostile filter costs.
    static let maxLength = 16_384
    /// The deepest nesting of parentheses and negations accepted.
    static let maxDepth = 32

    /// The parsed expression.
    let expression: Expression
    /// The listing the filter was read for.
    let listing: Listing

    /// Parses `text`, or nil when it is refused (the listings answer that with a 400).
    init?(_ text: String, listing: Listing = .objects) {
        guard let parsed = try? Self(parsing: text, listing: listing) else { return nil }
        self = parsed
    }

    /// Parses `text`, throwing why it is refused.
    init(parsing text: String, listing: Listing = .objects) throws(ParseError) {
        // Four UTF-8 bytes at most per character: a longer text cannot be short enough.
        guard text.utf8.count <= Self.maxLength * 4, text.count <= Self.maxLength else { throw .tooLong }
        let characters = Array(text)
        var parser = Parser(tokens: try Self.tokens(of: characters), listing: listing, end: characters.count)
        expression = try parser.filter()
        self.listing = listing
    }

    // MARK: Matching

    /// Whether the filter holds for an item whose field paths `value` resolves (nil: the item has
    /// no such field).
    func matches(_ value: (String) -> String?) -> Bool { Self.evaluate(expression, value, numeric: { _ in false }) }

    /// Whether the filter holds, comparing the fields `numeric` names as numbers (a DataSync
    /// property of kind `number`: `votes > 9` holds for 10) and every other field as text.
    func matches(_ value: (String) -> String?, numeric: (String) -> Bool) -> Bool { Self.evaluate(expression, value, numeric: numeric) }

    /// How `actual` compares with `expected`: as numbers when `numeric` and both read as
    /// numbers, else as text.
    static func order(_ actual: String, _ expected: String, numeric: Bool) -> ComparisonResult {
        if numeric, let x = Double(actual), let y = Double(expected) {
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        }
        return actual < expected ? .orderedAscending : actual > expected ? .orderedDescending : .orderedSame
    }

    /// Whether the filter holds for a user or channel.
    func matches(id: String, fields: [String: JSONValue], updated: String) -> Bool {
        matches { Self.objectValue(Substring($0), id: id, fields: fields, updated: updated) }
    }

    /// Whether the filter holds for a membership (or member) whose other side is `other`: a
    /// `channel.`/`uuid.` path reads `otherObject` (only its id when it has no metadata), any
    /// other path the membership itself.
    func matches(membership: StoredMembership, other: String, otherObject: StoredObject?) -> Bool {
        let prefix = (listing.side ?? "") + "."
        return matches { path in
            if path.hasPrefix(prefix) {
                let rest = path.dropFirst(prefix.count)
                guard let otherObject else { return rest == "id" ? other : nil }
                return Self.objectValue(rest, id: other, fields: otherObject.fields, updated: otherObject.updated)
            }
            switch path {
            case "status": return membership.status.stringValue
            case "type": return membership.type.stringValue
            case "updated": return membership.updated
            default: return Self.customKey(Substring(path)).flatMap { Self.text(of: membership.custom.objectValue?[String($0)]) }
            }
        }
    }

    /// `*` matches any run of characters; the rest matches literally.
    static func like(_ text: String, _ pattern: String) -> Bool {
        let parts = pattern.components(separatedBy: "*")
        guard parts.count > 1 else { return text == pattern }
        var rest = Substring(text)
        for (index, part) in parts.enumerated() where !part.isEmpty {
            if index == 0 {
                guard rest.hasPrefix(part) else { return false }
                rest = rest.dropFirst(part.count)
            } else if index == parts.count - 1 {
                return rest.hasSuffix(part)
            } else {
                guard let range = rest.range(of: part) else { return false }
                rest = rest[range.upperBound...]
            }
        }
        return true
    }

    /// Evaluates `expression`; its depth is bounded by the parser's ``maxDepth``.
    private static func evaluate(_ expression: Expression, _ value: (String) -> String?, numeric: (String) -> Bool) -> Bool {
        switch expression {
        case .comparison(let field, let op, let expected): compare(value(field), op, expected, numeric: numeric(field))
        case .not(let inner): !evaluate(inner, value, numeric: numeric)
        case .and(let terms): terms.allSatisfy { evaluate($0, value, numeric: numeric) }
        case .or(let terms): terms.contains { evaluate($0, value, numeric: numeric) }
        }
    }

    /// One comparison; a missing value satisfies only `!=`.
    private static func compare(_ actual: String?, _ op: Operator, _ expected: String, numeric: Bool) -> Bool {
        guard let actual else { return op == .notEqual }
        if op == .like { return like(actual, expected) }
        let order = order(actual, expected, numeric: numeric)
        switch op {
        case .equal: return order == .orderedSame
        case .notEqual: return order != .orderedSame
        case .less: return order == .orderedAscending
        case .lessOrEqual: return order != .orderedDescending
        case .greater: return order == .orderedDescending
        case .greaterOrEqual: return order != .orderedAscending
        case .like: return like(actual, expected)
        }
    }

    /// A user's or channel's value for a plain field path (`name`, `custom.team`).
    private static func objectValue(_ path: Substring, id: String, fields: [String: JSONValue], updated: String) -> String? {
        switch path {
        case "id": return id
        case "updated": return updated
        default:
            if let key = customKey(path) { return text(of: fields["custom"]?.objectValue?[String(key)]) }
            return fields[String(path)]?.stringValue
        }
    }

    /// The key of a `custom.<key>` path, or nil for any other path.
    private static func customKey(_ path: Substring) -> Substring? {
        guard path.hasPrefix("custom.") else { return nil }
        let key = path.dropFirst("custom.".count)
        return key.isEmpty || key.contains(".") ? nil : key
    }

    /// How many comparisons the filter holds (`filter_fast` allows 10).
    var predicateCount: Int {
        func count(_ expression: Expression) -> Int {
            switch expression {
            case .comparison: 1
            case .not(let inner): count(inner)
            case .and(let terms), .or(let terms): terms.map(count).reduce(0, +)
            }
        }
        return count(expression)
    }

    /// A scalar's text for comparison (`30`, `true`); nil for null, arrays and objects.
    static func scalarText(_ value: JSONValue?) -> String? { text(of: value) }

    /// A scalar's text for comparison (`30`, `true`); nil for null, arrays and objects.
    private static func text(of value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .int(let number)?: String(number)
        case .double(let number)?: String(number)
        case .bool(let flag)?: String(flag)
        default: nil
        }
    }

    /// Whether `field` names something a filter of `listing` may compare.
    fileprivate static func allows(_ field: String, in listing: Listing) -> Bool {
        if case .dataSync(let fields) = listing { return fields.contains(field) }
        let path = Substring(field)
        let objectField = { (path: Substring) in
            ["id", "name", "updated", "type", "status"].contains(path) || customKey(path) != nil
        }
        guard let side = listing.side else { return objectField(path) }
        if path.hasPrefix(side + ".") { return objectField(path.dropFirst(side.count + 1)) }
        return ["updated", "type", "status"].contains(path) || customKey(path) != nil
    }

    // MARK: Tokens

    /// A token of a filter, with the character offset where it starts.
    fileprivate struct Token: Sendable {
        /// What a token is.
        enum Kind: Equatable, Sendable {
            case open, close, not, and, or
            case op(Operator)
            /// A field name, or `LIKE`.
            case word(String)
            /// A quoted value, unescaped.
            case value(String)
        }

        var kind: Kind
        var offset: Int
    }

    /// Splits a filter into tokens, in one pass with no recursion.
    private static func tokens(of characters: [Character]) throws(ParseError) -> [Token] {
        var tokens: [Token] = []
        var index = 0
        func followedBy(_ character: Character) -> Bool {
            index + 1 < characters.count && characters[index + 1] == character
        }
        while index < characters.count {
            let character = characters[index], start = index
            var kind: Token.Kind
            switch character {
            case _ where character.isWhitespace:
                index += 1
                continue
            case "(": kind = .open
            case ")": kind = .close
            case "&", "|", "=":
                guard followedBy(character) else { throw .unexpectedCharacter(character, offset: start) }
                kind = character == "&" ? .and : character == "|" ? .or : .op(.equal)
                index += 1
            case "!":
                kind = followedBy("=") ? .op(.notEqual) : .not
                if followedBy("=") { index += 1 }
            case "<", ">":
                let orEqual = followedBy("=")
                kind = .op(character == "<" ? (orEqual ? .lessOrEqual : .less) : (orEqual ? .greaterOrEqual : .greater))
                if orEqual { index += 1 }
            case "'", "\"":
                var value = ""
                index += 1
                while index < characters.count, characters[index] != character {
                    if characters[index] == "\\" { index += 1 }
                    guard index < characters.count else { break }
                    value.append(characters[index])
                    index += 1
                }
                guard index < characters.count else { throw .unterminatedValue(offset: start) }
                kind = .value(value)
            default:
                guard isWordCharacter(character) else { throw .unexpectedCharacter(character, offset: start) }
                var word = ""
                while index < characters.count, isWordCharacter(characters[index]) {
                    word.append(characters[index])
                    index += 1
                }
                tokens.append(Token(kind: .word(word), offset: start))
                continue
            }
            tokens.append(Token(kind: kind, offset: start))
            index += 1
        }
        return tokens
    }

    /// Letters, digits, `_`, `-` and `.` (ASCII only) make field names and `LIKE`.
    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == "-" || character == ".")
    }
}

/// A recursive-descent parser over a filter's tokens; recursion only goes through `(` and `!`,
/// and ``ObjectFilter/maxDepth`` bounds both.
private struct Parser {
    let tokens: [ObjectFilter.Token]
    let listing: ObjectFilter.Listing
    /// The filter's length, the offset reported for a filter that ends too soon.
    let end: Int
    var position = 0
    var depth = 0

    /// The next token, not consumed.
    var peek: ObjectFilter.Token? { position < tokens.count ? tokens[position] : nil }
    /// Where the next token starts (the end when there is none).
    var offset: Int { peek?.offset ?? end }

    /// The whole filter: one `or`, with nothing after it.
    mutating func filter() throws(ObjectFilter.ParseError) -> ObjectFilter.Expression {
        let expression = try or()
        guard peek == nil else { throw .expected("&&, || or the end of the filter", offset: offset) }
        return expression
    }

    /// `and { "||" and }`.
    mutating func or() throws(ObjectFilter.ParseError) -> ObjectFilter.Expression {
        var terms = [try and()]
        while peek?.kind == .or || keyword("OR") {
            position += 1
            terms.append(try and())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    /// `unary { "&&" unary }`.
    mutating func and() throws(ObjectFilter.ParseError) -> ObjectFilter.Expression {
        var terms = [try unary()]
        while peek?.kind == .and || keyword("AND") {
            position += 1
            terms.append(try unary())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    /// `"!" unary | "(" or ")" | comparison`.
    mutating func unary() throws(ObjectFilter.ParseError) -> ObjectFilter.Expression {
        guard let token = peek, token.kind == .not || token.kind == .open else { return try comparison() }
        depth += 1
        defer { depth -= 1 }
        guard depth <= ObjectFilter.maxDepth else { throw .tooDeep(offset: token.offset) }
        position += 1
        if token.kind == .not { return .not(try unary()) }
        let inner = try or()
        guard peek?.kind == .close else { throw .expected(")", offset: offset) }
        position += 1
        return inner
    }

    /// `field op value`.
    mutating func comparison() throws(ObjectFilter.ParseError) -> ObjectFilter.Expression {
        guard case .word(let field)? = peek?.kind else { throw .expected("a field name, ! or (", offset: offset) }
        guard ObjectFilter.allows(field, in: listing) else { throw .unknownField(field, offset: offset) }
        position += 1
        let op: ObjectFilter.Operator
        switch peek?.kind {
        case .op(let symbol)?: op = symbol
        case .word(let word)? where word.uppercased() == "LIKE": op = .like
        default: throw .expected("a comparison operator", offset: offset)
        }
        position += 1
        switch peek?.kind {
        case .value(let value)?:
            position += 1
            return .comparison(field: field, op: op, value: value)
        case .word(let value)? where isDataSync:
            position += 1
            return .comparison(field: field, op: op, value: value)
        default:
            throw .expected("a quoted value", offset: offset)
        }
    }

    /// Whether the filter is a DataSync list's (its keywords and bare values).
    var isDataSync: Bool {
        if case .dataSync = listing { return true }
        return false
    }

    /// Whether the next token is the DataSync keyword `word` (`AND`, `OR`, in any case).
    func keyword(_ word: String) -> Bool {
        guard isDataSync, case .word(let text)? = peek?.kind else { return false }
        return text.uppercased() == word
    }
}

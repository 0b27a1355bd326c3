import Foundation
import ReplicaModel

/// An RFC 6901 JSON Pointer: a path into a JSON document, such as `/payload/custom/role`.
///
/// DataSync's PATCH names what it changes by pointer (the protocol reference, §5). In the text
/// form `~` is written `~0` and `/` is written `~1`; ``tokens`` hold the names unescaped.
///
/// ```swift
/// let pointer = JSONPointer(["payload", "a/b"])
/// pointer.text                                   // "/payload/a~1b"
/// try JSONPointer(parsing: "/payload/a~1b") == pointer   // true
/// ```
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The reference tokens, unescaped; empty for the whole document.
    public let tokens: [String]

    /// A pointer from its tokens.
    public init(_ tokens: [String]) { self.tokens = tokens }

    /// Parses the text form; throws ``JSONPatchError/invalidPointer(_:)`` for text that is
    /// neither empty nor starts with `/`, or holds a `~` not followed by `0` or `1`.
    public init(parsing text: String) throws(JSONPatchError) {
        guard !text.isEmpty else {
            tokens = []
            return
        }
        guard text.hasPrefix("/") else { throw .invalidPointer(text) }
        var result: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var escape = false
            for character in raw {
                if escape {
                    switch character {
                    case "0": token.append("~")
                    case "1": token.append("/")
                    default: throw .invalidPointer(text)
                    }
                    escape = false
                } else if character == "~" {
                    escape = true
                } else {
                    token.append(character)
                }
            }
            if escape { throw .invalidPointer(text) }
            result.append(token)
        }
        tokens = result
    }

    /// The text form, `~` and `/` escaped.
    public var text: String {
        tokens.map { "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }.joined()
    }

    /// The pointer's ``text``.
    public var description: String { text }

    /// This pointer with one more token.
    public func appending(_ token: String) -> JSONPointer { JSONPointer(tokens + [token]) }
}

/// One operation of an RFC 6902 JSON Patch, as DataSync's PATCH takes them (reference §5).
///
/// ```swift
/// let patch: [JSONPatchOperation] = [
///     .test(JSONPointer(["payload", "name"]), "Alice"),
///     .add(JSONPointer(["payload", "nickname"]), "Ali"),   // adds, or replaces a member that exists
///     .remove(JSONPointer(["status"])),                      // fails if there is no status
/// ]
/// ```
public enum JSONPatchOperation: Sendable, Hashable {
    /// Sets the member (or inserts into an array; `-` appends). Its parent must exist.
    case add(JSONPointer, JSONValue)
    /// Removes the member, which must exist.
    case remove(JSONPointer)
    /// Replaces the member, which must exist.
    case replace(JSONPointer, JSONValue)
    /// Removes the value at `from` and adds it at the path.
    case move(from: JSONPointer, to: JSONPointer)
    /// Adds a copy of the value at `from` at the path.
    case copy(from: JSONPointer, to: JSONPointer)
    /// Fails the whole patch unless the member equals the value.
    case test(JSONPointer, JSONValue)

    /// The operation as it goes on the wire: `{"op","path","value"?,"from"?}`.
    public var json: JSONValue {
        switch self {
        case .add(let path, let value): ["op": "add", "path": .string(path.text), "value": value]
        case .remove(let path): ["op": "remove", "path": .string(path.text)]
        case .replace(let path, let value): ["op": "replace", "path": .string(path.text), "value": value]
        case .move(let from, let to): ["op": "move", "from": .string(from.text), "path": .string(to.text)]
        case .copy(let from, let to): ["op": "copy", "from": .string(from.text), "path": .string(to.text)]
        case .test(let path, let value): ["op": "test", "path": .string(path.text), "value": value]
        }
    }

    /// The path the operation writes (or tests).
    public var path: JSONPointer {
        switch self {
        case .add(let path, _), .remove(let path), .replace(let path, _), .test(let path, _): path
        case .move(_, let to), .copy(_, let to): to
        }
    }

    /// Reads an operation from its wire form; throws ``JSONPatchError/invalidOperation(_:)``
    /// for an unknown `op`, a missing `path`, `value` or `from`, or a malformed pointer.
    public init(json: JSONValue) throws(JSONPatchError) {
        guard let fields = json.objectValue, let op = fields["op"]?.stringValue, let pathText = fields["path"]?.stringValue else {
            throw .invalidOperation("an operation needs op and path")
        }
        let path = try JSONPointer(parsing: pathText)
        func value() throws(JSONPatchError) -> JSONValue {
            guard let value = fields["value"] else { throw .invalidOperation("\(op) at \(pathText) needs a value") }
            return value
        }
        func from() throws(JSONPatchError) -> JSONPointer {
            guard let text = fields["from"]?.stringValue else { throw .invalidOperation("\(op) at \(pathText) needs from") }
            return try JSONPointer(parsing: text)
        }
        switch op {
        case "add": self = .add(path, try value())
        case "remove": self = .remove(path)
        case "replace": self = .replace(path, try value())
        case "move": self = .move(from: try from(), to: path)
        case "copy": self = .copy(from: try from(), to: path)
        case "test": self = .test(path, try value())
        default: throw .invalidOperation("unknown op \(op)")
        }
    }
}

/// Why a JSON Patch could not be applied (nothing of it is applied then).
public enum JSONPatchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Pointer text that RFC 6901 does not allow.
    case invalidPointer(String)
    /// An operation that is not one RFC 6902 defines, or lacks a member.
    case invalidOperation(String)
    /// The pointer names a member (or its parent) that does not exist.
    case missingTarget(JSONPointer)
    /// A `test` operation found another value.
    case testFailed(JSONPointer)
    /// A `move` into its own child.
    case moveIntoItself(JSONPointer)

    /// A one-line explanation naming the pointer.
    public var description: String {
        switch self {
        case .invalidPointer(let text): "invalid JSON pointer \(text)"
        case .invalidOperation(let what): "invalid JSON Patch operation: \(what)"
        case .missingTarget(let pointer): "no member at \(pointer.text)"
        case .testFailed(let pointer): "test failed at \(pointer.text)"
        case .moveIntoItself(let pointer): "cannot move a value into itself at \(pointer.text)"
        }
    }
}

/// Applies RFC 6902 JSON Patches: all operations or none (the simulator's PATCH, and checks of
/// the patches pnreplicate builds).
///
/// ```swift
/// let object: JSONValue = ["status": "active", "payload": ["name": "Alice"]]
/// let patched = try JSONPatch.apply([.replace(JSONPointer(["payload", "name"]), "Al")], to: object)
/// ```
public enum JSONPatch {
    /// `document` with every operation applied in order; throws (and changes nothing) when one fails.
    public static func apply(_ operations: [JSONPatchOperation], to document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var result = document
        for operation in operations {
            switch operation {
            case .add(let path, let value):
                result = try add(value, at: path, in: result)
            case .remove(let path):
                result = try remove(at: path, in: result).document
            case .replace(let path, let value):
                _ = try Self.value(at: path, in: result)
                result = try add(value, at: path, in: result, replacing: true)
            case .move(let from, let to):
                if from == to { continue }
                if to.tokens.count > from.tokens.count, Array(to.tokens.prefix(from.tokens.count)) == from.tokens {
                    throw .moveIntoItself(to)
                }
                let (removed, value) = try remove(at: from, in: result)
                result = try add(value, at: to, in: removed)
            case .copy(let from, let to):
                result = try add(try Self.value(at: from, in: result), at: to, in: result)
            case .test(let path, let expected):
                guard equal(try Self.value(at: path, in: result), expected) else { throw .testFailed(path) }
            }
        }
        return result
    }

    /// The value at `pointer`; throws ``JSONPatchError/missingTarget(_:)`` when there is none.
    public static func value(at pointer: JSONPointer, in document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var current = document
        for token in pointer.tokens {
            switch current {
            case .object(let fields):
                guard let next = fields[token] else { throw .missingTarget(pointer) }
                current = next
            case .array(let items):
                guard let index = arrayIndex(token, count: items.count, allowEnd: false) else { throw .missingTarget(pointer) }
                current = items[index]
            default:
                throw .missingTarget(pointer)
            }
        }
        return current
    }

    /// RFC 6902's equality: numbers by value (`1` equals `1.0`), objects whatever their key
    /// order, arrays element by element.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .double(let y)), (.double(let y), .int(let x)): Double(x) == y
        case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.object(let x), .object(let y)):
            x.count == y.count && x.allSatisfy { key, value in y[key].map { equal(value, $0) } ?? false }
        default: a == b
        }
    }

    /// An array index token: digits without a leading zero, below `count` (or `-`/`count` itself
    /// when `allowEnd`).
    static func arrayIndex(_ token: String, count: Int, allowEnd: Bool) -> Int? {
        if token == "-" { return allowEnd ? count : nil }
        guard !token.isEmpty, token.count <= 9, token.allSatisfy(\.isASCIIDigit), token == "0" || !token.hasPrefix("0"),
              let index = Int(token)
        else { return nil }
        return index < count || (allowEnd && index == count) ? index : nil
    }

    static func add(_ value: JSONValue, at pointer: JSONPointer, in document: JSONValue, replacing: Bool = false)
        throws(JSONPatchError) -> JSONValue
    {
        guard let last = pointer.tokens.last else { return value }
        return try update(document, at: ArraySlice(pointer.tokens.dropLast()), pointer: pointer) { parent throws(JSONPatchError) in
            switch parent {
            case .object(var fields):
                fields[last] = value
                return .object(fields)
            case .array(var items):
                guard let index = arrayIndex(last, count: items.count, allowEnd: !replacing) else { throw .missingTarget(pointer) }
                if replacing { items[index] = value } else { items.insert(value, at: index) }
                return .array(items)
            default:
                throw .missingTarget(pointer)
            }
        }
    }

    static func remove(at pointer: JSONPointer, in document: JSONValue) throws(JSONPatchError)
        -> (document: JSONValue, removed: JSONValue)
    {
        guard let last = pointer.tokens.last else { throw .missingTarget(pointer) }
        var removed = JSONValue.null
        let result = try update(document, at: ArraySlice(pointer.tokens.dropLast()), pointer: pointer) { parent throws(JSONPatchError) in
            switch parent {
            case .object(var fields):
                guard let value = fields.removeValue(forKey: last) else { throw .missingTarget(pointer) }
                removed = value
                return .object(fields)
            case .array(var items):
                guard let index = arrayIndex(last, count: items.count, allowEnd: false) else { throw .missingTarget(pointer) }
                removed = items.remove(at: index)
                return .array(items)
            default:
                throw .missingTarget(pointer)
            }
        }
        return (result, removed)
    }

    /// `document` with the container at `path` replaced by `change` of it.
    static func update(
        _ document: JSONValue, at path: ArraySlice<String>, pointer: JSONPointer,
        _ change: (JSONValue) throws(JSONPatchError) -> JSONValue
    ) throws(JSONPatchError) -> JSONValue {
        guard let token = path.first else { return try change(document) }
        switch document {
        case .object(var fields):
            guard let child = fields[token] else { throw .missingTarget(pointer) }
            fields[token] = try update(child, at: path.dropFirst(), pointer: pointer, change)
            return .object(fields)
        case .array(var items):
            guard let index = arrayIndex(token, count: items.count, allowEnd: false) else { throw .missingTarget(pointer) }
            items[index] = try update(items[index], at: path.dropFirst(), pointer: pointer, change)
            return .array(items)
        default:
            throw .missingTarget(pointer)
        }
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

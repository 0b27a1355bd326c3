import Foundation
import ReplicaModel

/// A JSON tree that can hold what no well-behaved encoder writes: number literals of any size
/// (`1e300`, `99999999999999999999`), strings with raw bytes (invalid UTF-8, control characters)
/// and objects with duplicate keys. ``HostileCase`` builds its answers with it.
indirect enum HostileJSON: Sendable {
    case null
    case bool(Bool)
    /// A number literal, written as is.
    case number(String)
    /// A string's bytes, written between quotes; only `"`, `\` and bytes below 0x20 are escaped.
    case string([UInt8])
    case array([HostileJSON])
    /// Members in order; keys may repeat.
    case object([(key: String, value: HostileJSON)])

    /// One step into a tree: an array index or the position of an object member.
    enum Step: Sendable, Hashable {
        case index(Int)
        case member(Int)
    }

    /// A node's location, with the key of the member that holds it (nil for array elements and the root).
    struct Location: Sendable {
        var path: [Step]
        var key: String?
        var parentKey: String?
    }

    static func text(_ value: String) -> HostileJSON { .string(Array(value.utf8)) }

    /// Converts a decoded value; object keys are sorted so that a seed always gives the same tree.
    /// Nesting below `depth` 64 is cut to `null` (answers are shallow; this only bounds recursion).
    init(_ value: JSONValue, depth: Int = 0) {
        guard depth < 64 else {
            self = .null
            return
        }
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .number(String(number))
        case .double(let number): self = .number(number.isFinite ? String(number) : "0")
        case .string(let text): self = .text(text)
        case .array(let items): self = .array(items.map { HostileJSON($0, depth: depth + 1) })
        case .object(let members):
            self = .object(members.sorted { $0.key < $1.key }.map { ($0.key, HostileJSON($0.value, depth: depth + 1)) })
        }
    }

    /// The compact JSON text (bytes) of this tree.
    var data: Data {
        var out: [UInt8] = []
        write(into: &out)
        return Data(out)
    }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .number(let literal): out += Array(literal.utf8)
        case .string(let bytes): Self.writeString(bytes, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(Array(member.key.utf8), into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ bytes: [UInt8], into out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Every node, root first, in document order.
    var locations: [Location] {
        var result: [Location] = []
        collect(path: [], key: nil, parentKey: nil, into: &result)
        return result
    }

    private func collect(path: [Step], key: String?, parentKey: String?, into result: inout [Location]) {
        result.append(Location(path: path, key: key, parentKey: parentKey))
        switch self {
        case .array(let items):
            for (i, item) in items.enumerated() { item.collect(path: path + [.index(i)], key: nil, parentKey: key, into: &result) }
        case .object(let members):
            for (i, member) in members.enumerated() {
                member.value.collect(path: path + [.member(i)], key: member.key, parentKey: key, into: &result)
            }
        default:
            break
        }
    }

    /// The node at `path`, or nil.
    func node(at path: ArraySlice<Step>) -> HostileJSON? {
        guard let step = path.first else { return self }
        switch (self, step) {
        case (.array(let items), .index(let i)) where items.indices.contains(i): return items[i].node(at: path.dropFirst())
        case (.object(let members), .member(let i)) where members.indices.contains(i): return members[i].value.node(at: path.dropFirst())
        default: return nil
        }
    }

    /// A copy with the node at `path` replaced by `change(node)`; unchanged when the path does not exist.
    func replacing(at path: ArraySlice<Step>, _ change: (HostileJSON) -> HostileJSON) -> HostileJSON {
        guard let step = path.first else { return change(self) }
        switch (self, step) {
        case (.array(var items), .index(let i)) where items.indices.contains(i):
            items[i] = items[i].replacing(at: path.dropFirst(), change)
            return .array(items)
        case (.object(var members), .member(let i)) where members.indices.contains(i):
            members[i].value = members[i].value.replacing(at: path.dropFirst(), change)
            return .object(members)
        default:
            return self
        }
    }

    /// Whether this is a string, number, bool or null.
    var isLeaf: Bool {
        switch self {
        case .array, .object: false
        default: true
        }
    }

    /// A short name of the node's kind, to pick a different one.
    var kind: Int {
        switch self {
        case .null: 0
        case .bool: 1
        case .number: 2
        case .string: 3
        case .array: 4
        case .object: 5
        }
    }
}

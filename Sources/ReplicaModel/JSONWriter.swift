import Foundation

extension JSONValue {
    /// The compact JSON text of this value with sorted keys, byte for byte what `JSONEncoder`
    /// with `[.sortedKeys, .withoutEscapingSlashes]` writes, or nil where this writer leaves the
    /// value to `JSONEncoder`: an object key with a non-ASCII character (whose order `JSONEncoder`
    /// defines) or a number that is not finite (which `JSONEncoder` refuses).
    ///
    /// Stored columns (`content`, `custom`) and publish bodies are written here first: it costs a
    /// fraction of `JSONEncoder`. The text is the same, so a stored value written either way
    /// compares equal.
    public func compactJSONBytes() -> [UInt8]? {
        var writer = CompactJSONWriter()
        do {
            try writer.write(self)
        } catch {
            return nil
        }
        return writer.bytes
    }
}

/// Writes ``JSONValue``s as compact JSON with sorted keys (``JSONValue/compactJSONBytes()``).
struct CompactJSONWriter {
    /// A value this writer leaves to `JSONEncoder`.
    struct Unsupported: Error {}

    var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(128)
    }

    mutating func write(_ value: JSONValue) throws(Unsupported) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .int(let number): writeInteger(number)
        case .double(let number):
            guard number.isFinite else { throw Unsupported() }
            // JSONEncoder writes `description`, without a trailing ".0".
            var text = number.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            bytes.append(contentsOf: text.utf8)
        case .string(let text): writeString(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                try write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            var keys = Array(members.keys)
            for key in keys where !key.utf8.allSatisfy({ $0 < 0x80 }) { throw Unsupported() }
            keys.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (offset, key) in keys.enumerated() {
                if offset > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                try write(members[key]!)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func writeInteger(_ number: Int64) {
        if number >= 0 && number < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(number))
            return
        }
        bytes.append(contentsOf: String(number).utf8)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A quoted string: `"` and `\` escaped, control characters as `\b \t \n \f \r` or `\u00XX`;
    /// everything else (`/`, DEL, non-ASCII) as is.
    mutating func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for (offset, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<offset]))
                runStart = offset + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                default:
                    bytes.append(contentsOf: "u00".utf8)
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

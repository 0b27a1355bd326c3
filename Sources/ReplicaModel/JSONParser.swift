import Foundation

extension JSONValue {
    /// Parses a JSON document straight from its bytes, or returns nil for anything this strict
    /// parser leaves to `JSONDecoder`.
    ///
    /// History pages, subscribe answers and stored columns are parsed here first, because
    /// Foundation's `JSONDecoder` costs several times more per value (each `JSONValue` goes through
    /// `Decodable` and a chain of thrown type mismatches). The result is the value `JSONDecoder`
    /// would give: integral numbers that fit in 64 bits are `.int` (`1.0`, `1e2` included), other
    /// finite numbers `.double`.
    ///
    /// Nil (fall back to `JSONDecoder`, which then decodes or names the error) for: invalid JSON,
    /// trailing commas, duplicate object keys (also keys Swift holds equal, such as `"é"` written
    /// precomposed and decomposed), lone surrogate escapes, invalid UTF-8, numbers that overflow a
    /// `Double`, and nesting deeper than 512.
    ///
    /// ```swift
    /// let value = JSONValue.parse(Data(#"{"a":[1,2.5,"x"]}"#.utf8))  // .object(["a": [1, 2.5, "x"]])
    /// ```
    public static func parse(_ data: Data) -> JSONValue? {
        data.withUnsafeBytes { raw -> JSONValue? in
            var parser = FastJSONParser(bytes: raw.bindMemory(to: UInt8.self))
            return try? parser.document()
        }
    }

    /// ``parse(_:)`` of a JSON document held in a string (a stored column), without copying it.
    public static func parse(text: String) -> JSONValue? {
        var text = text
        return text.withUTF8 { bytes -> JSONValue? in
            var parser = FastJSONParser(bytes: bytes)
            return try? parser.document()
        }
    }
}

/// A strict recursive-descent JSON parser over UTF-8 bytes (``JSONValue/parse(_:)``).
struct FastJSONParser {
    /// Anything this parser leaves to `JSONDecoder`.
    struct Unsupported: Error {}

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0
    /// Nesting deeper than this is left to `JSONDecoder` (which refuses it too), so that no input
    /// can exhaust the stack.
    static let maxDepth = 512

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func document() throws(Unsupported) -> JSONValue {
        skipWhitespace()
        let value = try self.value()
        skipWhitespace()
        guard index == bytes.count else { throw Unsupported() }
        return value
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func value() throws(Unsupported) -> JSONValue {
        guard index < bytes.count else { throw Unsupported() }
        switch bytes[index] {
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw Unsupported()
        }
    }

    private mutating func literal(_ word: StaticString) throws(Unsupported) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw Unsupported() }
        let start = word.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] { throw Unsupported() }
        index += count
    }

    private mutating func object() throws(Unsupported) -> JSONValue {
        depth += 1
        guard depth <= Self.maxDepth else { throw Unsupported() }
        index += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Unsupported() }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Unsupported() }
            index += 1
            skipWhitespace()
            let member = try value()
            // A repeated key: JSONDecoder keeps the first, a dictionary literal the last; leave it to JSONDecoder.
            guard members.updateValue(member, forKey: key) == nil else { throw Unsupported() }
            skipWhitespace()
            guard index < bytes.count else { throw Unsupported() }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            default: throw Unsupported()
            }
        }
    }

    private mutating func array() throws(Unsupported) -> JSONValue {
        depth += 1
        guard depth <= Self.maxDepth else { throw Unsupported() }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw Unsupported() }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default: throw Unsupported()
            }
        }
    }

    /// A string starting at its opening quote. Raw control characters, lone surrogates and invalid
    /// UTF-8 are unsupported.
    private mutating func string() throws(Unsupported) -> String {
        index += 1  // "
        let start = index
        // The common case: no escapes; the bytes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                guard let text else { throw Unsupported() }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw Unsupported() }
            index += 1
        }
        var buffer = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: buffer, as: UTF8.self) else { throw Unsupported() }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw Unsupported() }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = UInt32(try hex4())
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                        else { throw Unsupported() }
                        index += 2
                        let low = UInt32(try hex4())
                        guard (0xDC00..<0xE000).contains(low) else { throw Unsupported() }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw Unsupported()
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw Unsupported() }
                    buffer.append(contentsOf: UTF8.encode(unicode)!)
                default: throw Unsupported()
                }
            default:
                guard byte >= 0x20 else { throw Unsupported() }
                buffer.append(byte)
                index += 1
            }
        }
        throw Unsupported()
    }

    private mutating func hex4() throws(Unsupported) -> UInt16 {
        guard bytes.count - index >= 4 else { throw Unsupported() }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Unsupported()
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// A number as JSONDecoder reads it into ``JSONValue``: integral and within `Int64`, `.int`;
    /// otherwise a finite `.double`.
    private mutating func number() throws(Unsupported) -> JSONValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count else { throw Unsupported() }
        // Integer part: 0, or a non-zero digit and more digits.
        var integer: Int64 = 0
        var overflow = false
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { throw Unsupported() }
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) {
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                let digit = Int64(bytes[index] - UInt8(ascii: "0"))
                // Accumulated negative, so that Int64.min fits.
                let (times10, o1) = integer.multipliedReportingOverflow(by: 10)
                let (next, o2) = times10.subtractingReportingOverflow(digit)
                if o1 || o2 { overflow = true }
                integer = next
                index += 1
            }
        } else {
            throw Unsupported()
        }
        var isIntegerLiteral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isIntegerLiteral = false
            index += 1
            try digits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isIntegerLiteral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            try digits()
        }
        if isIntegerLiteral && !overflow {
            if negative { return .int(integer) }
            if integer != .min { return .int(-integer) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw Unsupported() }
        // An integer literal past Int64 stays a double; `1.0` and `1e2` are integers, as JSONDecoder reads them.
        if !isIntegerLiteral, double.rounded(.towardZero) == double, let exact = Int64(exactly: double) { return .int(exact) }
        return .double(double)
    }

    /// One or more decimal digits.
    private mutating func digits() throws(Unsupported) {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        guard index > start else { throw Unsupported() }
    }
}

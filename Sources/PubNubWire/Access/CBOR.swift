import Foundation

/// A CBOR data item (RFC 8949), as ``CBORDecoder`` reads it: what an Access Manager token is made of.
public indirect enum CBORValue: Sendable, Hashable {
    /// Major type 0.
    case unsigned(UInt64)
    /// Major type 1: the value is `-1 - n`, kept as `n` so that every encoded value fits.
    case negative(UInt64)
    /// Major type 2: a byte string.
    case bytes([UInt8])
    /// Major type 3: a text string (valid UTF-8).
    case text(String)
    /// Major type 4.
    case array([CBORValue])
    /// Major type 5, pairs in their encoded order (keys of any type, duplicates kept).
    case map([CBORPair])
    /// Major type 6: a tag and its item.
    case tagged(UInt64, CBORValue)
    /// `false` / `true`.
    case bool(Bool)
    /// `null`.
    case null
    /// `undefined` and the other simple values.
    case simple(UInt8)
    /// A half, single or double precision float.
    case float(Double)

    /// The text of a text string, or the UTF-8 text of a byte string (Access Manager writes its
    /// keys as byte strings); nil otherwise.
    public var keyText: String? {
        switch self {
        case .text(let text): text
        case .bytes(let bytes): String(validating: bytes, as: UTF8.self)
        default: nil
        }
    }

    /// The value of a map entry whose key reads as `key` (``keyText``); nil when absent or not a map.
    public subscript(key: String) -> CBORValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key.keyText == key }?.value
    }

    /// The integer value of an unsigned or negative integer that fits in `Int64`.
    public var integer: Int64? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }
}

/// One entry of a CBOR map.
public struct CBORPair: Sendable, Hashable {
    /// The key.
    public var key: CBORValue
    /// The value.
    public var value: CBORValue

    /// An entry.
    public init(key: CBORValue, value: CBORValue) {
        self.key = key
        self.value = value
    }
}

/// Why bytes are not a CBOR item `CBORDecoder` accepts. Every failure is one of these; the
/// decoder never traps, allocates more than its input allows, or recurses past its depth limit.
public enum CBORError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input ended inside an item (at this byte offset).
    case truncated(offset: Int)
    /// Bytes after the one top-level item.
    case trailingBytes(offset: Int)
    /// Nested deeper than `CBORDecoder.Limits.maxDepth`.
    case tooDeep
    /// More items in all than `CBORDecoder.Limits.maxItems`.
    case tooManyItems
    /// More bytes than `CBORDecoder.Limits.maxBytes`.
    case tooLarge(bytes: Int)
    /// An indefinite length (additional information 31), which tokens never use.
    case indefiniteLength(offset: Int)
    /// Additional information 28–30, reserved by the RFC.
    case reserved(offset: Int)
    /// A text string that is not UTF-8.
    case invalidUTF8(offset: Int)

    /// A sentence naming the failure.
    public var description: String {
        switch self {
        case .truncated(let offset): "CBOR ends inside an item at byte \(offset)"
        case .trailingBytes(let offset): "CBOR has bytes after its item at byte \(offset)"
        case .tooDeep: "CBOR nests too deeply"
        case .tooManyItems: "CBOR has too many items"
        case .tooLarge(let bytes): "CBOR of \(bytes) bytes is over the limit"
        case .indefiniteLength(let offset): "CBOR indefinite length at byte \(offset) is not supported"
        case .reserved(let offset): "CBOR reserved additional information at byte \(offset)"
        case .invalidUTF8(let offset): "CBOR text string at byte \(offset) is not UTF-8"
        }
    }
}

/// A bounded CBOR decoder (RFC 8949, definite lengths), written for Access Manager tokens: no
/// CBOR package is available to pnreplicate, and a token reaches the device from outside.
///
/// Bounds: the input size, the nesting depth and the total number of items are capped
/// (``Limits``), and every length is checked against the bytes left before anything is read or
/// allocated. Fuzzed in CI (`TokenFuzzTests`).
///
/// ```swift
/// let value = try CBORDecoder.decode(bytes)   // throws CBORError
/// value["ttl"]?.integer                       // 60
/// ```
public enum CBORDecoder {
    /// The decoder's bounds.
    public struct Limits: Sendable, Hashable {
        /// The largest input.
        public var maxBytes: Int
        /// The deepest nesting of arrays, maps and tags.
        public var maxDepth: Int
        /// The most items in all (every key, value and element counts).
        public var maxItems: Int

        /// Limits (the defaults fit any token PubNub can send in a URL).
        public init(maxBytes: Int = 64 * 1024, maxDepth: Int = 16, maxItems: Int = 20_000) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
            self.maxItems = maxItems
        }
    }

    /// The one item `bytes` encode.
    public static func decode(_ bytes: [UInt8], limits: Limits = Limits()) throws(CBORError) -> CBORValue {
        guard bytes.count <= limits.maxBytes else { throw .tooLarge(bytes: bytes.count) }
        var reader = Reader(bytes: bytes, limits: limits)
        let value = try reader.item(depth: 0)
        guard reader.offset == bytes.count else { throw .trailingBytes(offset: reader.offset) }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        var offset = 0
        var items = 0

        mutating func byte() throws(CBORError) -> UInt8 {
            guard offset < bytes.count else { throw .truncated(offset: offset) }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func bigEndian(_ count: Int) throws(CBORError) -> UInt64 {
            guard bytes.count - offset >= count else { throw .truncated(offset: offset) }
            var value: UInt64 = 0
            for _ in 0..<count { value = value << 8 | UInt64(bytes[offset]); offset += 1 }
            return value
        }

        /// The argument of an initial byte with additional information `info`.
        mutating func argument(_ info: UInt8, at start: Int) throws(CBORError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24: return try bigEndian(1)
            case 25: return try bigEndian(2)
            case 26: return try bigEndian(4)
            case 27: return try bigEndian(8)
            case 31: throw .indefiniteLength(offset: start)
            default: throw .reserved(offset: start)
            }
        }

        /// A length that must fit in the bytes left, each entry taking at least `minimumBytes`.
        mutating func length(_ info: UInt8, at start: Int, minimumBytes: Int) throws(CBORError) -> Int {
            let n = try argument(info, at: start)
            let left = UInt64(bytes.count - offset)
            guard n <= left / UInt64(max(minimumBytes, 1)) else { throw .truncated(offset: offset) }
            return Int(n)
        }

        mutating func count() throws(CBORError) {
            items += 1
            guard items <= limits.maxItems else { throw .tooManyItems }
        }

        mutating func item(depth: Int) throws(CBORError) -> CBORValue {
            guard depth <= limits.maxDepth else { throw .tooDeep }
            try count()
            let start = offset
            let initial = try byte()
            let major = initial >> 5
            let info = initial & 0x1F
            switch major {
            case 0:
                return .unsigned(try argument(info, at: start))
            case 1:
                return .negative(try argument(info, at: start))
            case 2:
                let n = try length(info, at: start, minimumBytes: 1)
                defer { offset += n }
                return .bytes(Array(bytes[offset..<offset + n]))
            case 3:
                let n = try length(info, at: start, minimumBytes: 1)
                defer { offset += n }
                guard let text = String(validating: bytes[offset..<offset + n], as: UTF8.self) else {
                    throw .invalidUTF8(offset: start)
                }
                return .text(text)
            case 4:
                let n = try length(info, at: start, minimumBytes: 1)
                var elements: [CBORValue] = []
                elements.reserveCapacity(n)
                for _ in 0..<n { elements.append(try item(depth: depth + 1)) }
                return .array(elements)
            case 5:
                let n = try length(info, at: start, minimumBytes: 2)
                var pairs: [CBORPair] = []
                pairs.reserveCapacity(n)
                for _ in 0..<n {
                    let key = try item(depth: depth + 1)
                    pairs.append(CBORPair(key: key, value: try item(depth: depth + 1)))
                }
                return .map(pairs)
            case 6:
                let tag = try argument(info, at: start)
                return .tagged(tag, try item(depth: depth + 1))
            default:
                return try simple(info, at: start)
            }
        }

        mutating func simple(_ info: UInt8, at start: Int) throws(CBORError) -> CBORValue {
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 0..<20, 23: return .simple(info)
            case 24: return .simple(try byte())
            case 25: return .float(Double(Float16Bits.float(UInt16(try bigEndian(2)))))
            case 26: return .float(Double(Float(bitPattern: UInt32(try bigEndian(4)))))
            case 27: return .float(Double(bitPattern: try bigEndian(8)))
            case 31: throw .indefiniteLength(offset: start)
            default: throw .reserved(offset: start)
            }
        }
    }
}

/// IEEE 754 half precision, decoded by hand (`Float16` is not on every platform Swift targets).
enum Float16Bits {
    static func float(_ bits: UInt16) -> Float {
        let sign: Float = bits & 0x8000 != 0 ? -1 : 1
        let exponent = Int((bits >> 10) & 0x1F)
        let fraction = Float(bits & 0x3FF)
        switch exponent {
        case 0: return sign * fraction * Float(sign: .plus, exponent: -24, significand: 1)
        case 31: return fraction == 0 ? sign * .infinity : .nan
        default: return sign * (1 + fraction / 1024) * Float(sign: .plus, exponent: exponent - 15, significand: 1)
        }
    }
}

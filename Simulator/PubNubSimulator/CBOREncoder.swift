import Foundation
import PubNubWire
import ReplicaModel

/// Writes a ``PubNubWire/CBORValue`` as CBOR bytes (RFC 8949): the simulator mints Access Manager
/// tokens with it, and the library's `CBORDecoder` reads them back.
///
/// Every length and integer gets its shortest argument (the preferred serialization, as Python's
/// `cbor2` writes it); map pairs keep the order given; floats are written as doubles. No CBOR
/// package is available to the project, and only the simulator writes tokens, so the encoder
/// lives here.
///
/// ```swift
/// CBOREncoder.encode(.map([CBORPair(key: .bytes(Array("v".utf8)), value: .unsigned(2))]))   // a1 41 76 02
/// ```
public enum CBOREncoder {
    /// The bytes of `value`.
    public static func encode(_ value: CBORValue) -> Data {
        var out = Data()
        append(value, to: &out)
        return out
    }

    /// `json` as CBOR: objects become maps with text keys, sorted, so that the same value always
    /// encodes to the same bytes (a token's `meta`).
    public static func value(json: JSONValue) -> CBORValue {
        switch json {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .int(let number): number >= 0 ? .unsigned(UInt64(number)) : .negative(UInt64(-(number + 1)))
        case .double(let number): .float(number)
        case .string(let text): .text(text)
        case .array(let items): .array(items.map(value(json:)))
        case .object(let fields):
            .map(fields.sorted { $0.key < $1.key }.map { CBORPair(key: .text($0.key), value: value(json: $0.value)) })
        }
    }

    private static func append(_ value: CBORValue, to out: inout Data) {
        switch value {
        case .unsigned(let number): head(0, number, into: &out)
        case .negative(let number): head(1, number, into: &out)
        case .bytes(let bytes):
            head(2, UInt64(bytes.count), into: &out)
            out.append(contentsOf: bytes)
        case .text(let text):
            head(3, UInt64(text.utf8.count), into: &out)
            out.append(contentsOf: text.utf8)
        case .array(let items):
            head(4, UInt64(items.count), into: &out)
            for item in items { append(item, to: &out) }
        case .map(let pairs):
            head(5, UInt64(pairs.count), into: &out)
            for pair in pairs {
                append(pair.key, to: &out)
                append(pair.value, to: &out)
            }
        case .tagged(let tag, let item):
            head(6, tag, into: &out)
            append(item, to: &out)
        case .bool(let flag): out.append(flag ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        case .simple(let number):
            // 20...23 are false, true, null, undefined; 24...31 take no one-byte form below 32.
            if number < 24 { out.append(0xe0 | number) } else { out.append(contentsOf: [0xf8, number]) }
        case .float(let number):
            out.append(0xfb)
            withUnsafeBytes(of: number.bitPattern.bigEndian) { out.append(contentsOf: $0) }
        }
    }

    /// The initial byte (the major type in its top 3 bits) and the argument in 0, 1, 2, 4 or 8 bytes.
    private static func head(_ major: UInt8, _ argument: UInt64, into out: inout Data) {
        let type = major << 5
        switch argument {
        case 0..<24:
            out.append(type | UInt8(argument))
        case 24...0xff:
            out.append(contentsOf: [type | 24, UInt8(argument)])
        case 0x100...0xffff:
            out.append(type | 25)
            withUnsafeBytes(of: UInt16(argument).bigEndian) { out.append(contentsOf: $0) }
        case 0x1_0000...0xffff_ffff:
            out.append(type | 26)
            withUnsafeBytes(of: UInt32(argument).bigEndian) { out.append(contentsOf: $0) }
        default:
            out.append(type | 27)
            withUnsafeBytes(of: argument.bigEndian) { out.append(contentsOf: $0) }
        }
    }
}

extension CBORValue {
    /// A byte string holding `text`'s UTF-8: Access Manager's map keys (`v`, `ttl`, `res`, `chan`...)
    /// are byte strings, not text strings.
    static func key(_ text: String) -> CBORValue { .bytes(Array(text.utf8)) }
}

import Foundation

/// Percent-encoding as PubNub's SDKs do it: the one owner of which bytes a request's path and
/// query escape. The wire client builds URLs with it, the simulator reads them with ``decode(_:)``,
/// and ``Validation/publishedByteCount(message:channel:meta:)`` measures a publish with it.
///
/// ```swift
/// PercentEncoding.pathSegment("a/b c")      // "a%2Fb%20c"
/// PercentEncoding.queryComponent("1+1=2")   // "1%2B1%3D2"
/// ```
public enum PercentEncoding {
    // Unreserved characters plus the sub-delimiters Foundation leaves literal in a path segment.
    private static let pathAllowed = table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@")
    private static let queryAllowed = table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$'()*,;:@/")

    /// Which bytes stay literal, indexed by byte (a lookup per byte: no hashing on the hot paths
    /// that build every request's URL and measure every publish).
    private static func table(_ literal: String) -> [Bool] {
        var allowed = [Bool](repeating: false, count: 256)
        for byte in literal.utf8 { allowed[Int(byte)] = true }
        return allowed
    }

    /// Encodes one path segment: `/` becomes `%2F`, `+` stays a literal plus.
    public static func pathSegment(_ text: String) -> String { encode(text, allowed: pathAllowed) }

    /// Encodes a query name or value: `+` becomes `%2B`, `?`, `&`, `=` are encoded.
    public static func queryComponent(_ text: String) -> String { encode(text, allowed: queryAllowed) }

    /// The length in bytes of ``pathSegment(_:)``'s encoding of `text`, without building it.
    public static func pathSegmentLength(_ text: String) -> Int { encodedLength(text.utf8, allowed: pathAllowed) }

    /// The length in bytes of ``queryComponent(_:)``'s encoding of these UTF-8 bytes, without
    /// building it.
    public static func queryComponentLength<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Int {
        encodedLength(bytes, allowed: queryAllowed)
    }

    private static func encodedLength<Bytes: Sequence<UInt8>>(_ bytes: Bytes, allowed: [Bool]) -> Int {
        var length = 0
        for byte in bytes { length += allowed[Int(byte)] ? 1 : 3 }
        return length
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func encode(_ text: String, allowed: [Bool]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if allowed[Int(byte)] {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `%XX` escapes; `+` stays a plus. Returns nil for a malformed escape or invalid UTF-8.
    public static func decode(_ text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

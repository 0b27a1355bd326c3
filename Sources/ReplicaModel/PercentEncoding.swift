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
    private static let pathAllowed: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@".utf8))
    private static let queryAllowed: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$'()*,;:@/".utf8))

    /// Encodes one path segment: `/` becomes `%2F`, `+` stays a literal plus.
    public static func pathSegment(_ text: String) -> String { encode(text, allowed: pathAllowed) }

    /// Encodes a query name or value: `+` becomes `%2B`, `?`, `&`, `=` are encoded.
    public static func queryComponent(_ text: String) -> String { encode(text, allowed: queryAllowed) }

    private static func encode(_ text: String, allowed: Set<UInt8>) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if allowed.contains(byte) {
                out.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
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

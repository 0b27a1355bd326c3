import Foundation

/// New random identifiers: every message id and outbox op id the library makes.
public enum RandomIdentifier {
    /// A random (version 4) UUID in lowercase, as message ids and op ids are written:
    /// `"1b4e28ba-2fa1-4d2b-883f-0016d3cca427"`.
    ///
    /// The same format as `UUID().uuidString.lowercased()`, for a fraction of its cost (the hex
    /// digits written into one buffer, no case mapping): a bulk import makes two per message.
    public static func uuidV4() -> String {
        var bytes: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &bytes) { fillRandom($0) }
        return withUnsafeBytes(of: &bytes) { raw -> String in
            var value = Array(raw)
            value[6] = (value[6] & 0x0F) | 0x40  // version 4
            value[8] = (value[8] & 0x3F) | 0x80  // RFC 4122 variant
            let digits = Array("0123456789abcdef".utf8)
            var text: [UInt8] = []
            text.reserveCapacity(36)
            for (index, byte) in value.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
            return String(decoding: text, as: UTF8.self)
        }
    }

    /// Fills `buffer` with cryptographically secure random bytes (the system generator:
    /// `getrandom` on Linux, `arc4random` on Apple platforms), 8 at a time.
    private static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        var generator = SystemRandomNumberGenerator()
        for offset in stride(from: 0, to: buffer.count, by: 8) {
            var word = generator.next()
            withUnsafeBytes(of: &word) { word in
                for index in 0..<min(8, buffer.count - offset) { buffer[offset + index] = word[index] }
            }
        }
    }
}

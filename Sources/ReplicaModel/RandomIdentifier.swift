import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// New identifiers: every message id and outbox op id the library makes (time-ordered where
/// they are made in bulk: ``uuidV7(at:)``).
public enum RandomIdentifier {
    /// A random (version 4) UUID in lowercase, as the ids that need no order are written:
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
            return format(value)
        }
    }

    /// A time-ordered (version 7, RFC 9562) UUID in lowercase, for the ids this device makes in
    /// bulk (outbox ops, its new messages): made in order, they sort in order, so each index on
    /// them grows at its end instead of at random pages (a batch send of 100,000 messages writes
    /// two such indexes). The first 48 bits are `date` in milliseconds, the next 12 a counter
    /// that keeps ids made in the same millisecond (or with a clock that went back) increasing,
    /// the rest random (62 bits: as unguessable between ids of one millisecond as needed for
    /// ids that are not secrets).
    ///
    /// ```swift
    /// RandomIdentifier.uuidV7(at: Date())  // "019a7c1e-5b2a-7000-9c4f-1e2d3c4b5a69"
    /// ```
    public static func uuidV7(at date: Date) -> String {
        let (milliseconds, counter) = v7Clock.next(milliseconds: UInt64(max(0, date.timeIntervalSince1970 * 1000)))
        var random: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &random) { fillRandom($0) }
        var value = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { value[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - UInt64(index)))) }
        value[6] = 0x70 | UInt8(truncatingIfNeeded: counter >> 8) & 0x0F  // version 7
        value[7] = UInt8(truncatingIfNeeded: counter)
        withUnsafeBytes(of: &random) { raw in
            for index in 8..<16 { value[index] = raw[index] }
        }
        value[8] = (value[8] & 0x3F) | 0x80  // RFC 4122 variant
        return format(value)
    }

    /// The millisecond and counter of the last version-7 id, so that the next one is greater.
    private final class V7Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var last: (milliseconds: UInt64, counter: UInt16) = (0, 0)

        func next(milliseconds: UInt64) -> (UInt64, UInt16) {
            lock.lock()
            defer { lock.unlock() }
            if milliseconds > last.milliseconds {
                last = (milliseconds, 0)
            } else if last.counter < 0xFFF {
                last.counter += 1
            } else {
                last = (last.milliseconds + 1, 0)   // 4,096 ids in one millisecond: borrow the next
            }
            return last
        }
    }

    private static let v7Clock = V7Clock()

    private static func format(_ value: [UInt8]) -> String {
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

    /// Fills `buffer` with cryptographically secure random bytes from the system generator
    /// (`/dev/urandom` on Linux, `arc4random` on Apple platforms), drawn 4 KiB at a time into a
    /// pool: a bulk send makes two ids per message, and a system call per 8 bytes cost more than
    /// the rest of making them.
    private static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) {
        randomPool.fill(buffer)
    }

    private static let randomPool = RandomPool()

    /// Random bytes drawn from the system generator in blocks, handed out once each.
    private final class RandomPool: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes = [UInt8](repeating: 0, count: 4096)
        private var next = 4096

        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            lock.lock()
            defer { lock.unlock() }
            for index in 0..<buffer.count {
                if next == bytes.count {
                    bytes.withUnsafeMutableBytes { Self.systemRandom($0) }
                    next = 0
                }
                buffer[index] = bytes[next]
                next += 1
            }
        }

        /// Fills `block` from the system's cryptographically secure generator in one call:
        /// `arc4random_buf` on Apple platforms, a read of `/dev/urandom` elsewhere (the standard
        /// library's generator, 8 bytes a call, when that fails).
        private static func systemRandom(_ block: UnsafeMutableRawBufferPointer) {
            #if canImport(Darwin)
            arc4random_buf(block.baseAddress!, block.count)
            #else
            if urandom >= 0, read(urandom, block.baseAddress!, block.count) == block.count { return }
            var generator = SystemRandomNumberGenerator()
            for offset in stride(from: 0, to: block.count, by: 8) {
                withUnsafeBytes(of: generator.next()) { word in
                    for index in 0..<min(8, block.count - offset) { block[offset + index] = word[index] }
                }
            }
            #endif
        }

        #if !canImport(Darwin)
        /// `/dev/urandom`, opened once for the process (-1 when it cannot be).
        private static let urandom: Int32 = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        #endif
    }
}

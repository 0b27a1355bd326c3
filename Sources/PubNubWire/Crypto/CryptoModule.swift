import Crypto
import Foundation
import ReplicaModel
import _CryptoExtras

/// Why encrypting or decrypting a payload failed. Every malformed input ends in one of these,
/// never in a crash.
public enum CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// There was nothing to encrypt or decrypt (PubNub's SDKs refuse empty input too).
    case emptyInput
    /// The payload to decrypt is not a JSON string (encrypted messages travel as base64 strings).
    case notAString
    /// The string is not standard base64.
    case invalidBase64
    /// A `PNED` header of a version this module does not know.
    case unknownHeaderVersion(UInt8)
    /// A header naming a cryptor this module does not know or does not accept.
    case unknownCryptor(String)
    /// A header or an IV cut short or inconsistent.
    case malformedHeader(String)
    /// AES-CBC refused the data: not a whole number of blocks, or bad padding (a wrong key, a
    /// wrong cryptor, or corrupt data).
    case decryptionFailed(String)
    /// The decrypted bytes are not JSON.
    case invalidJSON(String)
    /// Encryption itself failed.
    case encryptionFailed(String)

    /// A one-line explanation (never the key, never the data).
    public var description: String {
        switch self {
        case .emptyInput: "nothing to encrypt or decrypt"
        case .notAString: "an encrypted payload must be a base64 string"
        case .invalidBase64: "the payload is not valid base64"
        case .unknownHeaderVersion(let version): "unknown crypto header version \(version)"
        case .unknownCryptor(let id): "unknown or refused cryptor \(id)"
        case .malformedHeader(let reason): "malformed crypto header: \(reason)"
        case .decryptionFailed(let reason): "cannot decrypt: \(reason)"
        case .invalidJSON(let reason): "the decrypted payload is not JSON: \(reason)"
        case .encryptionFailed(let reason): "cannot encrypt: \(reason)"
        }
    }
}

/// The cryptors of PubNub's crypto module (`docs/encryption.md`; the layouts of `pubnub/swift`'s
/// `AESCBCCryptor.swift` and `CryptorHeader.swift`, and `pubnub/python`'s `crypto.py`).
public enum Cryptor: Sendable, Hashable {
    /// AES-256-CBC with a `PNED` header (cryptor id `ACRH`), a random IV per message, the key the
    /// raw SHA-256 of the cipher key. The default of current SDKs.
    case aesCbc
    /// The legacy cryptor (id `0000`, no header): AES-CBC whose key is the ASCII of the first 32
    /// hex digits of SHA-256(cipher key); with a random IV prefixed to the ciphertext, or the
    /// static IV `0123456789012345`. The IV mode is not on the wire: both sides must agree.
    case legacy(randomIV: Bool)
}

/// PubNub's crypto module: encrypts message payloads before they are published and decrypts
/// them from history and subscribe, byte for byte as the official SDKs do.
///
/// It encrypts with one cryptor and decrypts with every accepted one: data that starts with a
/// `PNED` header names its cryptor; anything else is read as legacy (with the configured IV mode).
///
/// ```swift
/// let crypto = CryptoModule(cipherKey: "myCipherKey")                 // ACRH, legacy accepted
/// let wire = try crypto.encrypt(message: ["text": "hi"])              // .string("UE5FRAFBQ1JI…")
/// let back = try crypto.decrypt(message: wire)                        // ["text": "hi"]
/// ```
///
/// The cipher key never leaves this value: no description, log or error contains it.
public struct CryptoModule: Sendable, CustomStringConvertible {
    /// The cryptor that encrypts.
    public let encryptor: Cryptor
    /// The IV mode the legacy cryptor decrypts with (and encrypts with, when it is the encryptor).
    public let legacyRandomIV: Bool
    /// Whether data without a header is decrypted as legacy (true by default, as the SDKs do).
    public let acceptsLegacy: Bool
    /// Whether `ACRH` data is decrypted (true by default).
    public let acceptsAESCBC: Bool

    private let aesKey: SymmetricKey
    private let legacyKey: SymmetricKey
    private let makeIV: @Sendable () -> [UInt8]

    /// A module for `cipherKey`.
    ///
    /// - Parameters:
    ///   - encryptWith: the cryptor for new payloads (default `.aesCbc`; `.legacy(randomIV:)` for
    ///     apps whose other clients only know the legacy cryptor).
    ///   - legacyRandomIV: the IV mode legacy data is decrypted with (the mode is not on the wire;
    ///     default: the legacy encryptor's, else random, as the SDKs default).
    ///   - acceptLegacy / acceptAESCBC: which cryptors decrypt (both by default; the encryptor's
    ///     own always does).
    public init(
        cipherKey: String, encryptWith: Cryptor = .aesCbc, legacyRandomIV: Bool? = nil, acceptLegacy: Bool = true,
        acceptAESCBC: Bool = true
    ) {
        self.init(
            cipherKey: cipherKey, encryptWith: encryptWith, legacyRandomIV: legacyRandomIV, acceptLegacy: acceptLegacy,
            acceptAESCBC: acceptAESCBC
        ) {
            var generator = SystemRandomNumberGenerator()
            return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
    }

    /// A module whose random IVs come from `iv` (tests reproduce the SDKs' fixed-IV vectors).
    package init(
        cipherKey: String, encryptWith: Cryptor, legacyRandomIV: Bool? = nil, acceptLegacy: Bool = true,
        acceptAESCBC: Bool = true, iv: @escaping @Sendable () -> [UInt8]
    ) {
        encryptor = encryptWith
        var encryptsLegacy = false
        if case .legacy(let random) = encryptWith {
            encryptsLegacy = true
            self.legacyRandomIV = legacyRandomIV ?? random
        } else {
            self.legacyRandomIV = legacyRandomIV ?? true
        }
        acceptsLegacy = acceptLegacy || encryptsLegacy
        acceptsAESCBC = acceptAESCBC || !encryptsLegacy
        let digest = Array(SHA256.hash(data: Data(cipherKey.utf8)))
        aesKey = SymmetricKey(data: digest)
        legacyKey = SymmetricKey(data: Array(Self.hex(digest).prefix(32).utf8))
        makeIV = iv
    }

    /// A short name of what this module decrypts to (the key and the decryption settings: the
    /// legacy IV mode, the accepted cryptors): equal for two modules that read the same bytes the
    /// same way, different otherwise. 16 hex digits of an HMAC keyed by the derived key, so the
    /// cipher key cannot be read back from it; the file cache keys its entries by it
    /// (`docs/files.md`, "The cache"), so bytes one configuration produced are never served to
    /// another.
    public var decryptionFingerprint: String {
        let settings = "pnreplicate-decryption-v1|\(legacyRandomIV ? "random" : "static")|\(acceptsLegacy)|\(acceptsAESCBC)"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(settings.utf8), using: aesKey)
        return String(Self.hex(Array(mac)).prefix(16))
    }

    /// Names the cryptors, never the key.
    public var description: String {
        "CryptoModule(encrypt: \(encryptor), legacy IV: \(legacyRandomIV ? "random" : "static"))"
    }

    static let header = Array("PNED".utf8)
    static let aesCbcId = Array("ACRH".utf8)
    static let staticIV = Array("0123456789012345".utf8)

    // MARK: Bytes

    /// Encrypts `plaintext` with the encryptor: `PNED` header + IV + ciphertext (ACRH), or
    /// [IV +] ciphertext (legacy).
    public func encrypt(_ plaintext: some DataProtocol) throws(CryptoError) -> Data {
        guard !plaintext.isEmpty else { throw .emptyInput }
        switch encryptor {
        case .aesCbc:
            let iv = makeIV()
            var out = Data(Self.header)
            out.append(1)
            out.append(contentsOf: Self.aesCbcId)
            out.append(UInt8(iv.count))
            out.append(contentsOf: iv)
            out.append(try Self.cbcEncrypt(plaintext, key: aesKey, iv: iv))
            return out
        case .legacy(let random):
            guard random else { return try Self.cbcEncrypt(plaintext, key: legacyKey, iv: Self.staticIV) }
            let iv = makeIV()
            return Data(iv) + (try Self.cbcEncrypt(plaintext, key: legacyKey, iv: iv))
        }
    }

    /// How many bytes ``encrypt(_:)`` makes of `count` plaintext bytes: PKCS#7 pads to the next
    /// whole block, then the IV (random IVs) and the `PNED` header (ACRH) are added. The file
    /// limit is checked on this size before anything is uploaded.
    public func encryptedSize(ofPlaintext count: Int) -> Int {
        let padded = (max(count, 0) / 16 + 1) * 16
        switch encryptor {
        case .aesCbc: return Self.header.count + 1 + Self.aesCbcId.count + 1 + 16 + padded
        case .legacy(let random): return (random ? 16 : 0) + padded
        }
    }

    /// Decrypts data written by any accepted cryptor.
    public func decrypt(_ data: some DataProtocol) throws(CryptoError) -> Data {
        let bytes = Array(data)
        guard !bytes.isEmpty else { throw .emptyInput }
        guard bytes.starts(with: Self.header) else {
            guard acceptsLegacy else { throw .unknownCryptor("0000") }
            if legacyRandomIV {
                guard bytes.count > 16 else { throw .decryptionFailed("shorter than an IV and a block") }
                return try Self.cbcDecrypt(bytes[16...], key: legacyKey, iv: Array(bytes[..<16]))
            }
            return try Self.cbcDecrypt(bytes[...], key: legacyKey, iv: Self.staticIV)
        }
        var index = Self.header.count
        guard bytes.count > index else { throw .malformedHeader("no version") }
        let version = bytes[index]
        guard version == 1 else { throw .unknownHeaderVersion(version) }
        index += 1
        guard bytes.count >= index + 4 else { throw .malformedHeader("no cryptor id") }
        let id = Array(bytes[index..<index + 4])
        index += 4
        guard id == Self.aesCbcId else {
            throw .unknownCryptor(String(decoding: id.map { (0x20...0x7e).contains($0) ? $0 : 0x3f }, as: UTF8.self))
        }
        guard acceptsAESCBC else { throw .unknownCryptor("ACRH") }
        guard bytes.count > index else { throw .malformedHeader("no metadata length") }
        var length = Int(bytes[index])
        index += 1
        if length == 0xff {
            guard bytes.count >= index + 2 else { throw .malformedHeader("no extended metadata length") }
            length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            index += 2
        }
        guard length == 16 else { throw .malformedHeader("metadata of \(length) bytes is not an IV") }
        guard bytes.count >= index + length else { throw .malformedHeader("metadata cut short") }
        let iv = Array(bytes[index..<index + length])
        return try Self.cbcDecrypt(bytes[(index + length)...], key: aesKey, iv: iv)
    }

    // MARK: Messages

    /// A message payload as it is published encrypted: its compact JSON, encrypted, as a
    /// standard base64 JSON string.
    public func encrypt(message: JSONValue) throws(CryptoError) -> JSONValue {
        let json: Data
        do {
            json = try message.jsonData()
        } catch {
            throw .encryptionFailed("the message is not encodable JSON")
        }
        return .string(try encrypt(json).base64EncodedString())
    }

    /// A received payload (history `message`, subscribe `d`) decrypted and parsed as JSON.
    public func decrypt(message: JSONValue) throws(CryptoError) -> JSONValue {
        guard case .string(let text) = message else { throw .notAString }
        guard let data = Data(base64Encoded: text) else { throw .invalidBase64 }
        let plaintext = try decrypt(data)
        do {
            return try JSONValue(jsonData: plaintext)
        } catch {
            throw .invalidJSON("\(plaintext.count) bytes")
        }
    }

    /// `payload` decrypted, or, when it does not decrypt, `payload` unchanged with the reason:
    /// what history and subscribe keep, so an undecryptable message is never lost.
    public func decryptKeepingPayload(_ payload: JSONValue) -> (JSONValue, CryptoError?) {
        do {
            return (try decrypt(message: payload), nil)
        } catch {
            return (payload, error)
        }
    }

    // MARK: AES-CBC

    private static func cbcEncrypt(_ plaintext: some DataProtocol, key: SymmetricKey, iv: [UInt8]) throws(CryptoError) -> Data {
        do {
            return try AES._CBC.encrypt(plaintext, using: key, iv: AES._CBC.IV(ivBytes: iv))
        } catch {
            throw .encryptionFailed("AES-CBC refused the input")
        }
    }

    private static func cbcDecrypt(_ ciphertext: ArraySlice<UInt8>, key: SymmetricKey, iv: [UInt8]) throws(CryptoError) -> Data {
        guard !ciphertext.isEmpty else { throw .decryptionFailed("no ciphertext") }
        guard ciphertext.count % 16 == 0 else { throw .decryptionFailed("not a whole number of blocks") }
        do {
            return try AES._CBC.decrypt(ciphertext, using: key, iv: AES._CBC.IV(ivBytes: iv))
        } catch {
            throw .decryptionFailed("bad padding (wrong key or corrupt data)")
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

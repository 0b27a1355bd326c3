import Foundation
import PubNubSimulator
import PubNubWire
import ReplicaModel
import Testing

/// PubNub's crypto module against the official SDKs' vectors
/// (`../shared/reference/realtime-drafts-crypto.md` §4.4), round trips, and hostile input.
@Suite("Crypto module")
struct CryptoModuleTests {
    static func bytes(_ base64: String) throws -> Data { try #require(Data(base64Encoded: base64)) }
    static func module(_ key: String, _ cryptor: Cryptor, iv: String) -> CryptoModule {
        let bytes = Array(iv.utf8)
        return CryptoModule(cipherKey: key, encryptWith: cryptor, iv: { bytes })
    }

    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var key: String
        var cryptor: Cryptor
        var plaintext: String
        var base64: String
        /// The IV the vector was made with, when it can be reproduced byte for byte.
        var iv: [UInt8]?
        var testDescription: String { name }
    }

    static let vectors: [Vector] = [
        Vector(name: "legacy static, testKey (python)", key: "testKey", cryptor: .legacy(randomIV: false),
               plaintext: "\"hey-0\"", base64: "QfD1NCBJCmt1aPPGU2cshw==", iv: []),
        Vector(name: "legacy static, SomeTestString (swift history fixture)", key: "SomeTestString", cryptor: .legacy(randomIV: false),
               plaintext: "true", base64: "s3+CcEE2QZ/Lh9CaPieJnQ==", iv: []),
        Vector(name: "legacy static, myCipherKey (python)", key: "myCipherKey", cryptor: .legacy(randomIV: false),
               plaintext: "Hello world encrypted with legacyModuleStaticIv",
               base64: "OtYBNABjeAZ9X4A91FQLFBo4th8et/pIAsiafUSw2+L8iWqJlte8x/eCL5cyjzQa", iv: []),
        Vector(name: "legacy random, enigma (swift)", key: "enigma", cryptor: .legacy(randomIV: true),
               plaintext: "yay!", base64: "MTIzNDU2Nzg5MDEyMzQ1NjdnONoCgo0wbuMGGMmfMX0=", iv: Array("1234567890123456".utf8)),
        Vector(name: "legacy random, myCipherKey (python)", key: "myCipherKey", cryptor: .legacy(randomIV: true),
               plaintext: "Hello world encrypted with legacyModuleRandomIv",
               base64: "T3J9iXI87PG9YY/lhuwmGRZsJgA5y8sFLtUpdFmNgrU1IAitgAkVok6YP7lacBiVhBJSJw39lXCHOLxl2d98Bg==", iv: nil),
        Vector(name: "ACRH, zero IV, myCipherKey (python)", key: "myCipherKey", cryptor: .aesCbc,
               plaintext: "We are the knights who say NI!",
               base64: "UE5FRAFBQ1JIEAAAAAAAAAAAAAAAAAAAAABbjKTFb0xLzByXntZkq2G7lHIGg5ZdQd73GwVG6o3ftw==", iv: Array(repeating: 0, count: 16)),
        Vector(name: "ACRH, myCipherKey (python)", key: "myCipherKey", cryptor: .aesCbc,
               plaintext: "Hello world encrypted with aesCbcModule",
               base64: "UE5FRAFBQ1JIEKzlyoyC/jB1hrjCPY7zm+X2f7skPd0LBocV74cRYdrkRQ2BPKeA22gX/98pMqvcZtFB6TCGp3Zf1M8F730nlfk=", iv: nil),
        Vector(name: "ACRH, pubnubenigma (swift subscribe fixture)", key: "pubnubenigma", cryptor: .aesCbc,
               plaintext: "\"Test Message\"", base64: "UE5FRAFBQ1JIEGOmGQMIMXD+91V+5hTxm7p7uEUhEEYohYLQz5fEGITC", iv: nil),
    ]

    @Test("every reference vector decrypts to its plaintext, with the default module (all cryptors accepted)", arguments: vectors)
    func decryptsVector(_ vector: Vector) throws {
        var randomIV = true
        if case .legacy(let random) = vector.cryptor { randomIV = random }
        let crypto = CryptoModule(cipherKey: vector.key, legacyRandomIV: randomIV)
        let plaintext = try crypto.decrypt(try Self.bytes(vector.base64))
        #expect(String(decoding: plaintext, as: UTF8.self) == vector.plaintext)
    }

    @Test("the deterministic vectors encrypt to the exact expected bytes", arguments: vectors.filter { $0.iv != nil })
    func encryptsVector(_ vector: Vector) throws {
        let iv = vector.iv ?? []
        let crypto = CryptoModule(cipherKey: vector.key, encryptWith: vector.cryptor, iv: { iv })
        #expect(try crypto.encrypt(Data(vector.plaintext.utf8)).base64EncodedString() == vector.base64)
    }

    @Test("messages: JSON in, a base64 string on the wire, the same JSON back; the reference's JSON vectors read as JSON")
    func messages() throws {
        let crypto = CryptoModule(cipherKey: "pubnubenigma")
        #expect(try crypto.decrypt(message: "UE5FRAFBQ1JIEGOmGQMIMXD+91V+5hTxm7p7uEUhEEYohYLQz5fEGITC") == "Test Message")
        let message: JSONValue = ["id": "m1", "text": "Grüße 👋", "custom": ["n": 1]]
        let wire = try crypto.encrypt(message: message)
        guard case .string(let text) = wire else { Issue.record("not a string: \(wire)"); return }
        #expect(text.hasPrefix("UE5FRAFBQ1JI"), "PNED + version 1 + ACRH")
        #expect(try crypto.decrypt(message: wire) == message)
        #expect(try crypto.decrypt(message: try crypto.encrypt(message: "")) == "")
    }

    @Test("round trips in every mode: 1, 15, 16, 17 bytes, 32 KiB and non-ASCII; empty input is refused as the SDKs refuse it",
          arguments: [Cryptor.aesCbc, .legacy(randomIV: true), .legacy(randomIV: false)])
    func roundTrips(_ cryptor: Cryptor) throws {
        let crypto = CryptoModule(cipherKey: "round trip", encryptWith: cryptor)
        var random = SplitMix64(seed: 3)
        for size in [1, 15, 16, 17, 32 * 1024] {
            let plaintext = Data((0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            let sealed = try crypto.encrypt(plaintext)
            #expect(try crypto.decrypt(sealed) == plaintext, "\(cryptor) \(size) bytes")
        }
        let text = Data("Ünïcödé — 中文 — 🎉".utf8)
        #expect(try crypto.decrypt(try crypto.encrypt(text)) == text)
        #expect(throws: CryptoError.emptyInput) { try crypto.encrypt(Data()) }
        #expect(throws: CryptoError.emptyInput) { try crypto.decrypt(Data()) }
    }

    @Test("the module's description names its cryptors and never the key or the derived legacy key")
    func descriptionHidesKey() throws {
        // The legacy static vectors above prove the derivation (myCipherKey → 8c33871ac40eea7e…).
        let crypto = CryptoModule(cipherKey: "myCipherKey", encryptWith: .legacy(randomIV: false))
        #expect(crypto.description == "CryptoModule(encrypt: legacy(randomIV: false), legacy IV: static)")
        #expect(!"\(crypto)".contains("myCipherKey") && !"\(crypto)".contains("8c33871a"))
    }

    @Test("a module that refuses a cryptor says so; a wrong key or a mangled header is a typed error")
    func refusals() throws {
        let legacyOnly = CryptoModule(cipherKey: "myCipherKey", encryptWith: .legacy(randomIV: true), acceptAESCBC: false)
        #expect(throws: CryptoError.unknownCryptor("ACRH")) {
            try legacyOnly.decrypt(try Self.bytes("UE5FRAFBQ1JIEKzlyoyC/jB1hrjCPY7zm+X2f7skPd0LBocV74cRYdrkRQ2BPKeA22gX/98pMqvcZtFB6TCGp3Zf1M8F730nlfk="))
        }
        let wrong = CryptoModule(cipherKey: "not the key")
        #expect(throws: CryptoError.self) {
            try wrong.decrypt(try Self.bytes("UE5FRAFBQ1JIEKzlyoyC/jB1hrjCPY7zm+X2f7skPd0LBocV74cRYdrkRQ2BPKeA22gX/98pMqvcZtFB6TCGp3Zf1M8F730nlfk="))
        }
        #expect(throws: CryptoError.unknownHeaderVersion(2)) { try wrong.decrypt(Data("PNED\u{02}ACRH".utf8)) }
        #expect(throws: CryptoError.unknownCryptor("ABCD")) { try wrong.decrypt(Data("PNED\u{01}ABCD\u{10}".utf8)) }
        #expect(throws: CryptoError.notAString) { try wrong.decrypt(message: ["a": 1]) }
        #expect(throws: CryptoError.invalidBase64) { try wrong.decrypt(message: "not base64!") }
    }

    static var fuzzCount: Int { Int(ProcessInfo.processInfo.environment["PNREPLICATE_CRYPTO_FUZZ"] ?? "") ?? 10_000 }

    @Test("fuzz: random and truncated base64, bad headers and bad padding always end in a typed error, never a crash")
    func fuzz() throws {
        let crypto = CryptoModule(cipherKey: "fuzz")
        let valid = try crypto.encrypt(message: ["text": "a message long enough to span a few AES blocks"]).stringValue ?? ""
        let validBytes = try Self.bytes(valid)
        var random = SplitMix64(seed: 42)
        var errors: [String: Int] = [:]
        for round in 0..<Self.fuzzCount {
            let input: JSONValue
            switch round % 5 {
            case 0:   // random bytes, base64
                let count = Int(random.next() % 80)
                input = .string(Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }).base64EncodedString())
            case 1:   // truncated valid ciphertext
                input = .string(Data(validBytes.prefix(Int(random.next() % UInt64(validBytes.count)))).base64EncodedString())
            case 2:   // a header with random version, id and length
                var bytes = Array("PNED".utf8)
                for _ in 0..<Int(random.next() % 40) { bytes.append(UInt8(truncatingIfNeeded: random.next())) }
                if random.next() % 2 == 0, bytes.count > 4 { bytes[4] = 1 }
                input = .string(Data(bytes).base64EncodedString())
            case 3:   // bad padding: one flipped bit in the last block
                var bytes = Array(validBytes)
                bytes[bytes.count - 1 - Int(random.next() % 16)] ^= UInt8(1 << (random.next() % 8))
                input = .string(Data(bytes).base64EncodedString())
            default:  // broken base64 text
                var text = Array(valid.utf8)
                text[Int(random.next() % UInt64(text.count))] = UInt8(truncatingIfNeeded: random.next() % 128)
                input = .string(String(decoding: text, as: UTF8.self))
            }
            do {
                let value = try crypto.decrypt(message: input)
                // A flipped bit that still decrypts (a bit in plaintext-affecting position) must
                // still be JSON; anything else is a typed error.
                errors["decrypted", default: 0] += value == .null ? 0 : 1
            } catch {
                errors[String(describing: error).prefix(20).description, default: 0] += 1
            }
        }
        #expect(errors.values.reduce(0, +) == Self.fuzzCount)
        #expect((errors["decrypted"] ?? 0) < Self.fuzzCount / 100, "\(errors)")
    }
}

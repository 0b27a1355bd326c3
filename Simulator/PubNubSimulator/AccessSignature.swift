import Crypto
import Foundation
import PubNubWire

/// The request signature of Access Manager, as the Python SDK computes it when it holds the
/// secret key (`pubnub/utils.py` `sign_request`; reference §2.2): the simulator verifies grants,
/// revokes and admin requests with it, and tests sign their own admin requests.
///
/// The string signed is, for every request but a `POST` to `/publish...`:
///
/// ```
/// METHOD \n publish_key \n path \n sorted query \n body
/// ```
///
/// and the signature is `v2.` + base64url(HMAC-SHA256(secret, string)) without `=` padding. A
/// `POST` to a path starting `/publish` uses version 1: `sub_key \n pub_key \n path \n query`,
/// padding kept, no prefix.
///
/// The query is every parameter but `signature` (`timestamp`, `uuid`, `pnsdk`, `auth`...),
/// sorted by name, each value percent-encoded leaving only `A-Z a-z 0-9 _ . -` (the SDK's `pam_encode`),
/// joined `k=v&k=v`. The path is the path as the SDK built it: the request's decoded segments
/// are encoded again as Python's `url_encode` does (`quote(value, safe="~")`, keeping the `,`
/// between channels), which gives back the bytes sent for every path the SDK builds.
///
/// ## Topics
///
/// - ``signature(of:publishKey:subscribeKey:secretKey:)``
/// - ``signed(_:publishKey:subscribeKey:secretKey:timestamp:)``
/// - ``stringToSign(_:publishKey:subscribeKey:)``
/// - ``isVersion1(_:)``
public enum AccessSignature {
    /// The text the signature covers, for `request` as received (its `signature` item left out).
    public static func stringToSign(_ request: WireRequest, publishKey: String, subscribeKey: String) -> String {
        let path = "/" + request.pathSegments.map(pathSegment).joined(separator: "/")
        let query = request.query.filter { $0.name != "signature" }
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            .map { $0.name + "=" + queryValue($0.value ?? "") }
            .joined(separator: "&")
        if isVersion1(request) {
            return "\(subscribeKey)\n\(publishKey)\n\(path)\n\(query)"
        }
        return "\(request.method.rawValue.uppercased())\n\(publishKey)\n\(path)\n\(query)\n\(bodyText(request))"
    }

    /// Whether `request` is signed with version 1 (a `POST` to a path starting `/publish`).
    public static func isVersion1(_ request: WireRequest) -> Bool {
        request.method == .post && request.pathSegments.first?.hasPrefix("publish") == true
    }

    /// The signature `request` should carry, made with `secretKey`.
    public static func signature(of request: WireRequest, publishKey: String, subscribeKey: String, secretKey: String) -> String {
        let text = stringToSign(request, publishKey: publishKey, subscribeKey: subscribeKey)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: SymmetricKey(data: Data(secretKey.utf8)))
        let encoded = base64URL(Data(mac))
        if isVersion1(request) { return encoded }
        var trimmed = encoded
        while trimmed.hasSuffix("=") { trimmed.removeLast() }
        return "v2." + trimmed
    }

    /// `request` signed as the Python SDK signs it: any `timestamp` and `signature` replaced by
    /// `timestamp` (unix seconds) and the signature over the result. An admin request for tests.
    public static func signed(
        _ request: WireRequest, publishKey: String, subscribeKey: String, secretKey: String, timestamp: Int64
    ) -> WireRequest {
        var copy = request
        copy.query.removeAll { $0.name == "timestamp" || $0.name == "signature" }
        copy.query.append(QueryItem("timestamp", String(timestamp)))
        let signature = signature(of: copy, publishKey: publishKey, subscribeKey: subscribeKey, secretKey: secretKey)
        copy.query.append(QueryItem("signature", signature))
        return copy
    }

    /// Whether `request` carries the signature `secretKey` makes, and a `timestamp`. No clock
    /// skew is checked: the simulator's clock can be moved far from the client's (reference
    /// §2.2 leaves the allowed skew unconfirmed).
    static func verify(_ request: WireRequest, publishKey: String, subscribeKey: String, secretKey: String) -> Bool {
        guard let given = request.queryValue("signature"), let timestamp = request.queryValue("timestamp"),
            !timestamp.isEmpty, timestamp.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return false }
        let expected = signature(of: request, publishKey: publishKey, subscribeKey: subscribeKey, secretKey: secretKey)
        return Data(given.utf8).constantTimeEquals(Data(expected.utf8))
    }

    /// A path segment as Python's `urllib.parse.quote(value, safe="~")`, plus the `,` that joins
    /// channel lists (`join_channels` leaves it raw; a channel name cannot hold one).
    static func pathSegment(_ value: String) -> String {
        percentEncoded(value, keeping: [UInt8(ascii: "~"), UInt8(ascii: ",")])
    }

    /// A query value as the SDK's `pam_encode`: `quote(value, safe="~")`, then `~` → `%7E`, so only
    /// letters, digits, `_`, `.` and `-` stay as they are.
    static func queryValue(_ value: String) -> String { percentEncoded(value, keeping: []) }

    private static func percentEncoded(_ value: String, keeping extra: Set<UInt8>) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where extra.contains(byte):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0f, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// The body as the SDK signed it: its text before compression ("" without a body).
    private static func bodyText(_ request: WireRequest) -> String {
        guard var body = request.body else { return "" }
        if request.headers.first(where: { $0.key.lowercased() == "content-encoding" })?.value.lowercased() == "gzip",
            let inflated = try? Gzip.decompress(body)
        {
            body = inflated
        }
        return String(decoding: body, as: UTF8.self)
    }

    /// Base64url (`-` and `_`), `=` padding kept.
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }
}

extension Data {
    /// Compares in time that depends on the lengths only.
    func constantTimeEquals(_ other: Data) -> Bool {
        guard count == other.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(self, other) { difference |= a ^ b }
        return difference == 0
    }
}

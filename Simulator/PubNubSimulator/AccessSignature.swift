import Crypto
import Foundation
import PubNubWire

/// The request signature of Access Manager (reference §2.2): the simulator verifies grants,
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
/// padding kept, no prefix (the Python and Kotlin SDKs); the JavaScript SDK signs it as a `GET`
/// in version 2, with no body (`RequestSignature.signature` in `src/transport/middleware.ts`).
///
/// The query is every parameter but `signature` (`timestamp`, `uuid`, `pnsdk`, `auth`...),
/// sorted by name, each value percent-encoded leaving only `A-Z a-z 0-9 _ . -`, joined
/// `k=v&k=v`: the Python (`pam_encode`), Kotlin (`pamEncode`) and JavaScript (`encodeString`)
/// SDKs agree on it.
///
/// The path is the path **as the client sent it**, and there the SDKs differ: Python escapes a
/// JSON message's `,` and `:` (`%2C`, `%3A`), Kotlin leaves them raw, both leave the `,` between
/// channels raw, and Python puts App Context ids and file names in unescaped (``PathStyle``). The
/// simulator sees only the decoded segments, so ``verify(_:publishKey:subscribeKey:secretKey:)``
/// accepts a signature over any of those spellings. That admits nothing more: every spelling
/// escapes `%` and `/`, so each decodes back to exactly the request's segments, and a signature
/// made for any other request (another segment, query value or body) still fails.
///
/// ## Topics
///
/// - ``signature(of:publishKey:subscribeKey:secretKey:)``
/// - ``signed(_:publishKey:subscribeKey:secretKey:timestamp:)``
/// - ``stringToSign(_:publishKey:subscribeKey:)``
/// - ``isVersion1(_:)``
public enum AccessSignature {
    /// The text the signature covers, for `request` as received (its `signature` item left out),
    /// with the path spelled as the Python SDK spells a channel list (``PathStyle/pythonList``):
    /// the spelling ``signature(of:publishKey:subscribeKey:secretKey:)`` and
    /// ``signed(_:publishKey:subscribeKey:secretKey:timestamp:)`` sign.
    public static func stringToSign(_ request: WireRequest, publishKey: String, subscribeKey: String) -> String {
        let path = PathStyle.pythonList.path(request.pathSegments)
        return text(request, form: isVersion1(request) ? .version1 : .version2, path: path, query: signedQuery(request),
                    publishKey: publishKey, subscribeKey: subscribeKey)
    }

    /// Whether `request` is signed with version 1 (a `POST` to a path starting `/publish`).
    public static func isVersion1(_ request: WireRequest) -> Bool {
        request.method == .post && request.pathSegments.first?.hasPrefix("publish") == true
    }

    /// The signature `request` should carry, made with `secretKey`, over
    /// ``stringToSign(_:publishKey:subscribeKey:)``.
    public static func signature(of request: WireRequest, publishKey: String, subscribeKey: String, secretKey: String) -> String {
        let text = stringToSign(request, publishKey: publishKey, subscribeKey: subscribeKey)
        return sign(text, version2: !isVersion1(request), secretKey: secretKey)
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

    /// Whether `request` carries a `timestamp` and a signature `secretKey` makes over one of the
    /// texts an official SDK signs for it (one of ``signedPaths(_:)`` in the form of its method). No
    /// clock skew is checked: the simulator's clock can be moved far from the client's (reference
    /// §2.2 leaves the allowed skew unconfirmed).
    static func verify(_ request: WireRequest, publishKey: String, subscribeKey: String, secretKey: String) -> Bool {
        guard let given = request.queryValue("signature"), let timestamp = request.queryValue("timestamp"),
            !timestamp.isEmpty, timestamp.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return false }
        // Only the `v2.` prefix tells a POST publish's two forms apart.
        let form: Form = !isVersion1(request) ? .version2 : given.hasPrefix("v2.") ? .javaScriptPublish : .version1
        let query = signedQuery(request)
        let givenBytes = Data(given.utf8)
        // Stopping at a match tells a caller nothing the answer does not.
        return signedPaths(request).contains { path in
            let text = text(request, form: form, path: path, query: query, publishKey: publishKey, subscribeKey: subscribeKey)
            return givenBytes.constantTimeEquals(Data(sign(text, version2: form != .version1, secretKey: secretKey).utf8))
        }
    }

    /// At most this many spellings of one path are tried: past it, only each SDK's spelling of
    /// the whole path (one ``PathStyle`` for every segment). 6³: every combination for three
    /// segments (a file path's channel, file id and name are the most an SDK varies), while a
    /// hostile path of many segments cannot cost 6ⁿ MACs.
    static let maximumSignedPaths = 216

    /// The spellings of `request`'s path that an official SDK may have signed, the
    /// ``PathStyle/pythonList`` one first: every combination of each segment's ``PathStyle``
    /// spellings (a Python file path escapes the channel but not the file name), or only the
    /// uniform ones when there would be more than ``maximumSignedPaths``.
    static func signedPaths(_ request: WireRequest) -> [String] {
        let segments = request.pathSegments
        let choices = segments.map { segment in distinct(PathStyle.allCases.map { $0.encode(segment) }) }
        let combinations = choices.reduce(1) { min($0 * $1.count, maximumSignedPaths + 1) }
        guard !segments.isEmpty, combinations <= maximumSignedPaths else {
            return distinct(PathStyle.allCases.map { $0.path(segments) })
        }
        var paths = [""]
        for spellings in choices {
            paths = paths.flatMap { prefix in spellings.map { prefix + "/" + $0 } }
        }
        return paths
    }

    /// The shapes of signed text.
    private enum Form {
        /// `METHOD \n pub \n path \n query \n body`, signed `v2.…` unpadded.
        case version2
        /// `sub \n pub \n path \n query`, padded, no prefix: a `POST` publish from Python or Kotlin.
        case version1
        /// `GET \n pub \n path \n query \n`, signed `v2.…`: a `POST` publish from JavaScript.
        case javaScriptPublish
    }

    private static func text(
        _ request: WireRequest, form: Form, path: String, query: String, publishKey: String, subscribeKey: String
    ) -> String {
        switch form {
        case .version1: "\(subscribeKey)\n\(publishKey)\n\(path)\n\(query)"
        case .version2: "\(request.method.rawValue.uppercased())\n\(publishKey)\n\(path)\n\(query)\n\(bodyText(request))"
        case .javaScriptPublish: "GET\n\(publishKey)\n\(path)\n\(query)\n"
        }
    }

    /// The query as signed: every item but `signature`, sorted by name, values as `pam_encode`.
    private static func signedQuery(_ request: WireRequest) -> String {
        request.query.filter { $0.name != "signature" }
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            .map { $0.name + "=" + queryValue($0.value ?? "") }
            .joined(separator: "&")
    }

    private static func sign(_ text: String, version2: Bool, secretKey: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: SymmetricKey(data: Data(secretKey.utf8)))
        let encoded = base64URL(Data(mac))
        guard version2 else { return encoded }
        var trimmed = encoded
        while trimmed.hasSuffix("=") { trimmed.removeLast() }
        return "v2." + trimmed
    }

    /// A query value as Python's `pam_encode` (`quote(value, safe="~")`, then `~` → `%7E`) and
    /// JavaScript's `encodeString` write it: only letters, digits, `_`, `.` and `-` stay.
    static func queryValue(_ value: String) -> String { PathStyle.javaScript.encode(value) }

    /// The distinct elements of `values`, first occurrences in order.
    private static func distinct(_ values: [String]) -> [String] {
        var out: [String] = []
        for value in values where !out.contains(value) { out.append(value) }
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

extension AccessSignature {
    /// How an official SDK spells one path segment, from the SDKs' source. Every style escapes
    /// `%` and `/` (as `%25`, `%2F`, hex in upper case), so every spelling decodes back to the
    /// segment it was made from.
    ///
    /// The Swift SDK does not sign (it takes no secret key), so it has no style here.
    enum PathStyle: CaseIterable {
        /// Python's `join_channels`: each name as ``python``, the `,` between names raw. The
        /// spelling ``AccessSignature/stringToSign(_:publishKey:subscribeKey:)`` uses.
        case pythonList
        /// Python's `url_encode`, `quote(value, safe="~")`: `A-Z a-z 0-9 _ . - ~` stay. A
        /// published message's `,`, `:`, space and `+` become `%2C`, `%3A`, `%20`, `%2B`.
        case python
        /// JavaScript's `encodeString`: `encodeURIComponent`, then `! ~ * ' ( )` escaped too, so
        /// `A-Z a-z 0-9 _ . -` stay.
        case javaScript
        /// JavaScript's `encodeNames`: each name as ``javaScript``, the `,` between names raw.
        case javaScriptList
        /// Kotlin and Java: Retrofit's `@Path` escaping, which OkHttp keeps in the `encodedPath` the
        /// SDK signs. Visible ASCII stays but for `space " < > ^ \` { } | \ ? # / %`: a JSON
        /// message's `,`, `:` and `[` `]` go raw.
        case retrofit
        /// Not escaped at all: Python and JavaScript put some ids in a path as they are (App
        /// Context ids, file ids and names) and sign that text, whatever the HTTP library then
        /// escapes on the wire. Only `%` and `/` are escaped: sent raw, neither would come back as
        /// the same segment.
        case unencoded

        /// `segment` as this style spells it.
        func encode(_ segment: String) -> String {
            var out: [UInt8] = []
            out.reserveCapacity(segment.utf8.count)
            for byte in segment.utf8 {
                if keeps(byte) {
                    out.append(byte)
                } else {
                    out.append(UInt8(ascii: "%"))
                    out.append(Self.hexDigits[Int(byte >> 4)])
                    out.append(Self.hexDigits[Int(byte & 0x0f)])
                }
            }
            // Kept bytes are ASCII or, for `unencoded`, whole UTF-8 sequences of the segment.
            return String(decoding: out, as: UTF8.self)
        }

        /// `/` + the segments, each spelled in this style.
        func path(_ segments: [String]) -> String {
            "/" + segments.map(encode).joined(separator: "/")
        }

        private static let hexDigits = Array("0123456789ABCDEF".utf8)

        private func keeps(_ byte: UInt8) -> Bool {
            if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "/") { return false }
            let unreserved: Bool
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                unreserved = true
            default:
                unreserved = false
            }
            switch self {
            case .javaScript: return unreserved
            case .javaScriptList: return unreserved || byte == UInt8(ascii: ",")
            case .python: return unreserved || byte == UInt8(ascii: "~")
            case .pythonList: return unreserved || byte == UInt8(ascii: "~") || byte == UInt8(ascii: ",")
            case .retrofit: return (0x21...0x7E).contains(byte) && !Self.retrofitEscapes.contains(byte)
            case .unencoded: return true
            }
        }

        /// Retrofit's `PATH_SEGMENT_ALWAYS_ENCODE_SET` (` "<>^\`{}|\?#`, the space being below
        /// 0x21 already); `/` and `%` are escaped by every style.
        private static let retrofitEscapes = Set(#""<>^`{}|\?#"#.utf8)
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

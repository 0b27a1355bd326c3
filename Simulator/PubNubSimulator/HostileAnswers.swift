import Foundation
import PubNubWire
import ReplicaModel

/// One way a hostile server (or a broken proxy in front of PubNub) mangles an answer.
///
/// Mutations that answer with an error status (``html5xx``, ``redirect``, ``tooManyRequests``)
/// never reach the server; the others mangle the answer to a request the server applied.
public enum HostileMutation: String, Sendable, Hashable, CaseIterable {
    /// A value somewhere in the body replaced by one of another JSON type.
    case wrongType
    /// A value replaced by a huge, negative or fractional number (`1e300`, `-1`, `2^64`, `99999999999999999999`).
    case hugeNumber
    /// A timetoken replaced by an odd one (`""`, `-1`, `2^64`, `9223372036854775808`, `1e17`, a float).
    case oddTimetoken
    /// An ISO date (`updated`, a chat payload's `createdAt`) replaced by an odd one: years 0001,
    /// 9999, 10000, +275760, negative, `2020-02-30`, a leap second, outside 1677–2262.
    case oddDate
    /// An id (or a history channel key) replaced by `""`, `.`, `..`, 93+ bytes, control characters.
    case oddId
    /// Invalid UTF-8 bytes (or a lone surrogate escape) inside a string.
    case invalidUTF8
    /// The body cut short.
    case truncated
    /// The body blown up to a few MB (a huge string or thousands of copied entries), bounded.
    case oversized
    /// A value wrapped in hundreds to thousands of nested arrays.
    case deepNesting
    /// A list entry (a message, an action, an object) repeated, or an object key written twice.
    case duplicated
    /// An object member removed.
    case missingField
    /// Unknown members added, with odd values.
    case extraFields
    /// Another endpoint's success shape (a publish answer to a history request, ...).
    case otherShape
    /// 200 with an empty body, or with `null`, `{}`, `[]`, `""`, `0`, `true`.
    case emptyBody
    /// A success status other than 200 (201, 202, 203, 204, 206, 299), or an error status with a success body.
    case oddStatus
    /// Odd headers on the real body: wrong content types, `Content-Encoding: gzip` on plain text,
    /// a `Retry-After` or `Location` on a 200, very long values, control characters.
    case oddHeaders
    /// A proxy's HTML 500, 502, 503 or 504 page.
    case html5xx
    /// 301, 302, 303, 307 or 308 with a `Location` (another origin, the same path, garbage).
    case redirect
    /// 429 with a `Retry-After` of `1e17`, `-5`, `inf`, `nan`, an HTTP date far in the future, ...
    case tooManyRequests

    /// Whether the request reaches the server (and is applied) before the answer is mangled.
    public var reachesServer: Bool {
        switch self {
        case .html5xx, .redirect, .tooManyRequests: false
        default: true
        }
    }
}

/// One seeded hostile answer: the same seed gives the same mutation and the same bytes.
///
/// ```swift
/// let hostile = HostileCase(seed: 42, index: 7)      // or HostileCase(seed: caseSeed)
/// let real = hostile.mutation.reachesServer ? await server.handle(request) : nil
/// let response = hostile.answer(to: request, real: real)
/// ```
///
/// A ``FaultPlan`` with ``FaultProfile/hostileServer`` draws one per hostile request; its log
/// names the case seed (``Fault/hostileAnswer(seed:)``), so a single answer can be rebuilt.
public struct HostileCase: Sendable, Hashable, CustomStringConvertible {
    /// The case's own seed.
    public let seed: UInt64
    /// What this case does to the answer.
    public let mutation: HostileMutation
    /// The largest body an ``HostileMutation/oversized`` answer grows to (default 4 MiB).
    public var oversizeLimit = 4 << 20

    /// The case for `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        var random = SplitMix64(seed: seed)
        mutation = HostileMutation.allCases[Int(random.next() % UInt64(HostileMutation.allCases.count))]
    }

    /// Case number `index` of a run seeded with `seed`.
    public init(seed: UInt64, index: UInt64) {
        var mixer = SplitMix64(seed: seed ^ (index &* 0xD1B5_4A32_D192_ED03))
        self.init(seed: mixer.next())
    }

    /// `hostile-<mutation>-<seed in hex>`.
    public var description: String { "hostile-\(mutation.rawValue)-\(String(seed, radix: 16))" }

    /// The mangled answer to `request`. `real` is the server's answer when the request reached it
    /// (see ``HostileMutation/reachesServer``); a 2xx real answer is mutated more often than not,
    /// otherwise a valid shape for the endpoint is.
    public func answer(to request: WireRequest, real: WireResponse?) -> WireResponse {
        var random = SplitMix64(seed: seed)
        _ = random.next()  // the mutation's draw
        var headers = ["Content-Type": "application/json"]
        var base: HostileJSON
        if let real, (200..<300).contains(real.status), let parsed = try? JSONValue(jsonData: real.body), random.nextUnitInterval() < 0.6 {
            base = HostileJSON(parsed)
            for (name, value) in real.headers { headers[name] = value }
        } else {
            base = HostileJSON(HostileTemplates.shape(for: request, &random))
        }
        var mutator = HostileMutator(random: random, oversizeLimit: oversizeLimit)
        return mutator.apply(mutation, to: base, headers: headers, request: request)
    }
}

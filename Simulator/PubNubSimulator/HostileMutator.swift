import Foundation
import PubNubWire
import ReplicaModel

/// Applies one ``HostileMutation`` to a valid answer, drawing every choice from a seeded generator.
struct HostileMutator {
    var random: SplitMix64
    let oversizeLimit: Int

    static let timetokenKeys: Set<String> = ["timetoken", "actionTimetoken", "messageTimetoken", "start", "end"]
    static let dateKeys: Set<String> = ["updated", "createdAt"]
    static let idKeys: Set<String> = ["id", "uuid", "type", "value", "eTag", "userId", "channelId", "next", "prev"]

    static let hugeNumbers = [
        "1e300", "-1e300", "-1", "0", "-0", "18446744073709551616", "18446744073709551615", "99999999999999999999",
        "9223372036854775808", "-9223372036854775809", "4.2", "1e-400", "1.7976931348623157e309",
        "123456789012345678901234567890", "1E17", "-5",
    ]
    static let oddTimetokens: [HostileJSON] = [
        .text(""), .text("-1"), .text("0"), .text("18446744073709551615"), .text("18446744073709551616"),
        .text("9223372036854775807"), .text("9223372036854775808"), .text("99999999999999999999"), .text("1e17"),
        .text(" 17900000000000000"), .text("0x10"), .text("１７９"), .text("17900000000000000.5"), .number("1.79e16"),
        .number("-5"), .number("1e300"), .number("18446744073709551616"), .number("9223372036854775808"), .null,
    ]
    static let oddDates: [HostileJSON] = [
        .text("0001-01-01T00:00:00Z"), .text("9999-12-31T23:59:59.999999Z"), .text("10000-01-01T00:00:00Z"),
        .text("+275760-09-13T00:00:00Z"), .text("-000001-01-01T00:00:00Z"), .text("2020-02-30T00:00:00Z"),
        .text("2016-12-31T23:59:60Z"), .text("1677-09-21T00:12:43Z"), .text("1677-09-20T00:00:00Z"),
        .text("2262-04-11T23:47:17Z"), .text("2262-04-12T00:00:00.000Z"), .text("1600-01-01T00:00:00+14:00"),
        .text("2020-01-01T00:00:00.12345678901234567890Z"), .text("2020-01-01T00:00:00+99:99"), .text("2020-01-01"),
        .text(""), .text("yesterday"), .text("2020-13-01T00:00:00Z"), .text("2020-01-01T24:00:00Z"),
        .text("1969-12-31T23:59:59.999999999Z"), .text("9999-12-31T23:59:59-23:59"), .number("0"), .number("1e300"),
    ]
    static let oddIds: [HostileJSON] = {
        [
            .text(""), .text("."), .text(".."), .text("a/b"), .text("../x"), .text(String(repeating: "x", count: 93)),
            .text(String(repeating: "y", count: 300)), .string([0]), .text("a\u{1}b"), .text("\n"), .text(" "),
            .text(String(repeating: "🙂", count: 30)), .text("%2F"), .text("?"), .text("#"), .text("\u{202E}evil"),
            .text("general"), .text("me"),
        ]
    }()

    mutating func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
    mutating func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(random.next() % UInt64(bound)) }

    /// A location, preferring (when any) those whose key is in `keys`.
    mutating func location(in tree: HostileJSON, keys: Set<String> = [], leavesOnly: Bool = false) -> HostileJSON.Location {
        let all = tree.locations.filter { !leavesOnly || tree.node(at: $0.path[...])?.isLeaf == true }
        let preferred = all.filter { $0.key.map(keys.contains) ?? false }
        if !preferred.isEmpty, random.nextUnitInterval() < 0.85 { return pick(preferred) }
        return all.isEmpty ? HostileJSON.Location(path: [], key: nil, parentKey: nil) : pick(all)
    }

    mutating func other(than node: HostileJSON) -> HostileJSON {
        let choices: [HostileJSON] = [
            .null, .bool(true), .number("0"), .number("-1"), .number("1.5"), .text(""), .text("x"), .array([]), .object([]),
            .array([.null]), .object([("a", .null)]),
        ]
        return pick(choices.filter { $0.kind != node.kind })
    }

    mutating func apply(_ mutation: HostileMutation, to base: HostileJSON, headers: [String: String], request: WireRequest) -> WireResponse {
        var headers = headers
        var status = 200
        var tree = base
        var body: Data?
        switch mutation {
        case .wrongType:
            let spot = location(in: tree)
            tree = tree.replacing(at: spot.path[...]) { other(than: $0) }
        case .hugeNumber:
            let spot = location(in: tree, leavesOnly: true)
            let literal = pick(Self.hugeNumbers)
            let asText = random.next() % 3 == 0
            tree = tree.replacing(at: spot.path[...]) { _ in asText ? .text(literal) : .number(literal) }
        case .oddTimetoken:
            let spot = location(in: tree, keys: Self.timetokenKeys, leavesOnly: true)
            let value = pick(Self.oddTimetokens)
            tree = tree.replacing(at: spot.path[...]) { _ in value }
        case .oddDate:
            let spot = location(in: tree, keys: Self.dateKeys, leavesOnly: true)
            let value = pick(Self.oddDates)
            tree = tree.replacing(at: spot.path[...]) { _ in value }
        case .oddId:
            tree = oddId(tree)
        case .invalidUTF8:
            let strings = tree.locations.filter {
                if case .string? = tree.node(at: $0.path[...]) { return true }
                return false
            }
            let spot = strings.isEmpty ? location(in: tree) : pick(strings)
            let insert: [UInt8] = pick([[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]])
            let escape = random.next() % 4 == 0
            tree = tree.replacing(at: spot.path[...]) { node in
                guard case .string(let bytes) = node else { return .string(insert) }
                let at = below(bytes.count + 1)
                return .string(Array(bytes[..<at]) + (escape ? Array("\\uD800".utf8) : insert) + Array(bytes[at...]))
            }
            if escape {
                // Written raw so that the escape survives: the serializer would escape the backslash.
                body = Data(String(decoding: tree.data, as: UTF8.self).replacingOccurrences(of: "\\\\uD800", with: "\\uD800").utf8)
            }
        case .truncated:
            let data = tree.data
            body = data.prefix(below(data.count))
        case .oversized:
            body = oversized(tree)
        case .deepNesting:
            let depth = pick([100, 511, 512, 513, 2_000, 20_000])
            let spot = location(in: tree)
            let marker = "\"pnr-hostile-nest\""
            tree = tree.replacing(at: spot.path[...]) { _ in .number(marker) }
            let nested = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
            body = Data(String(decoding: tree.data, as: UTF8.self).replacingOccurrences(of: marker, with: nested).utf8)
        case .duplicated:
            tree = duplicated(tree)
        case .missingField:
            let members = tree.locations.filter { $0.key != nil }
            if !members.isEmpty {
                let spot = pick(members)
                tree = tree.replacing(at: spot.path.dropLast()) { node in
                    guard case .object(var list) = node, case .member(let i)? = spot.path.last else { return node }
                    list.remove(at: i)
                    return .object(list)
                }
            }
        case .extraFields:
            let objects = tree.locations.filter {
                if case .object? = tree.node(at: $0.path[...]) { return true }
                return false
            }
            if !objects.isEmpty {
                let spot = pick(objects)
                let extra: HostileJSON = pick([.number("1e300"), .text("surprise"), .object([("__proto__", .null)]), .array([])])
                tree = tree.replacing(at: spot.path[...]) { node in
                    guard case .object(let list) = node else { return node }
                    return .object(list + [("pnr-unknown", extra), ("error", .bool(true))])
                }
            }
        case .otherShape:
            tree = HostileJSON(HostileTemplates.otherShape(than: request, &random))
        case .emptyBody:
            body = Data(pick(["", "null", "{}", "[]", "\"\"", "0", "true", " ", "\u{FEFF}{}"]).utf8)
        case .oddStatus:
            status = pick([201, 202, 203, 204, 206, 299, 400, 404, 409, 412, 500])
            if status == 204 { body = Data() }
        case .oddHeaders:
            let choices: [(String, String)] = [
                ("Content-Type", "text/html"), ("Content-Type", "application/octet-stream"), ("Content-Type", ""),
                ("Content-Type", "application/json; charset=ISO-8859-1"), ("Content-Encoding", "gzip"),
                ("Content-Encoding", "br, gzip"), ("Retry-After", "1e17"), ("Location", "https://evil.example/"),
                ("X-Hostile", String(repeating: "h", count: 16_384)), ("X-Control", "a\u{0}b\u{7}c"),
                ("Cache-Control", "no-cache, no-cache, no-store"), ("ETag", "\"\""), ("Set-Cookie", "a=b; Domain=.example"),
            ]
            for _ in 0...below(3) {
                let (name, value) = pick(choices)
                headers[name] = value
            }
        case .html5xx:
            status = pick([500, 502, 503, 504])
            headers = ["Content-Type": "text/html"]
            body = Data("<html><head><title>\(status)</title></head><body><h1>\(status) Bad Gateway</h1><hr>nginx</body></html>".utf8)
        case .redirect:
            status = pick([301, 302, 303, 307, 308])
            headers = ["Content-Type": "text/html", "Location": pick([
                "https://evil.example/v2/objects/demo/uuids", "/" + request.pathSegments.joined(separator: "/"), "", "javascript:alert(1)",
                "http://127.0.0.1:1/", String(repeating: "/x", count: 2_000),
            ])]
            body = random.next() % 2 == 0 ? Data() : Data("<a href=\"https://evil.example/\">moved</a>".utf8)
        case .tooManyRequests:
            status = 429
            headers["Retry-After"] = pick([
                "1e17", "-5", "inf", "nan", "Infinity", "-inf", "1e308", "99999999999999999999", "18446744073709551616",
                "9223372036854775807", "1e11", "Fri, 31 Dec 9999 23:59:59 GMT", "Thu, 01 Jan 1970 00:00:00 GMT",
                "Sun, 06 Nov 1994 08:49:37 GMT", "Mon, 01 Jan 2200 00:00:00 GMT", "", " ", "0", "0.000001", "abc", "5, 10",
                "-0", "1e-300", "1.5",
            ])
            body = Data(#"{"status":429,"error":true,"message":"Too many requests"}"#.utf8)
        }
        return WireResponse(status: status, headers: headers, body: body ?? tree.data)
    }

    private mutating func oddId(_ tree: HostileJSON) -> HostileJSON {
        let value = pick(Self.oddIds)
        // Sometimes rename a history channel key instead of a value.
        let channelKeys = tree.locations.filter { $0.parentKey == "channels" && $0.key != nil }
        if !channelKeys.isEmpty, random.next() % 3 == 0 {
            let spot = pick(channelKeys)
            guard case .string(let bytes) = value else { return tree }
            let newKey = String(decoding: bytes, as: UTF8.self)
            return tree.replacing(at: spot.path.dropLast()) { node in
                guard case .object(var list) = node, case .member(let i)? = spot.path.last else { return node }
                list[i].key = newKey
                return .object(list)
            }
        }
        let spot = location(in: tree, keys: Self.idKeys, leavesOnly: true)
        return tree.replacing(at: spot.path[...]) { _ in value }
    }

    private mutating func duplicated(_ tree: HostileJSON) -> HostileJSON {
        let lists = tree.locations.filter {
            if case .array(let items)? = tree.node(at: $0.path[...]) { return !items.isEmpty }
            return false
        }
        if !lists.isEmpty, random.next() % 4 != 0 {
            let spot = pick(lists)
            let times = 1 + below(3)
            return tree.replacing(at: spot.path[...]) { node in
                guard case .array(let items) = node else { return node }
                let copy = items[below(items.count)]
                return .array(items + Array(repeating: copy, count: times))
            }
        }
        let members = tree.locations.filter { $0.key != nil }
        guard !members.isEmpty else { return tree }
        let spot = pick(members)
        let replacement = other(than: tree.node(at: spot.path[...]) ?? .null)
        return tree.replacing(at: spot.path.dropLast()) { node in
            guard case .object(var list) = node, case .member(let i)? = spot.path.last else { return node }
            list.insert((list[i].key, replacement), at: i + 1)
            return .object(list)
        }
    }

    private mutating func oversized(_ tree: HostileJSON) -> Data {
        let target = (1 << 20) + below(Swift.max(1, oversizeLimit - (1 << 20)))
        let lists = tree.locations.filter {
            if case .array(let items)? = tree.node(at: $0.path[...]) { return !items.isEmpty }
            return false
        }
        if !lists.isEmpty, random.next() % 2 == 0 {
            // Thousands of copies of one entry, up to the target size.
            let spot = pick(lists)
            let grown = tree.replacing(at: spot.path[...]) { node in
                guard case .array(let items) = node else { return node }
                let copy = items[0]
                let size = Swift.max(1, copy.data.count)
                return .array(Array(repeating: copy, count: Swift.min(50_000, target / size)))
            }
            return grown.data
        }
        let strings = tree.locations.filter {
            if case .string? = tree.node(at: $0.path[...]) { return true }
            return false
        }
        guard !strings.isEmpty else { return tree.data + Data(repeating: UInt8(ascii: " "), count: target) }
        let spot = pick(strings)
        return tree.replacing(at: spot.path[...]) { _ in .string(Array(repeating: UInt8(ascii: "x"), count: target)) }.data
    }
}

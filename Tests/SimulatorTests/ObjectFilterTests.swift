import Foundation
import Testing
@testable import PubNubSimulator
import PubNubSimulatorTesting
import PubNubWire
import ReplicaModel

/// The filters the Chat SDK (kmp-chat) sends, word for word.
enum ChatSDKFilters {
    static let notInternal = "!(channel.id LIKE 'PUBNUB_INTERNAL_MODERATION_*')"
    static let notInternalGeneral = "!(channel.id LIKE 'PUBNUB_INTERNAL_MODERATION_*') && (channel.id == 'general')"
    static let internalGeneral = "channel.id == 'PUBNUB_INTERNAL_MODERATION_general'"
    static let internalAny = "channel.id LIKE 'PUBNUB_INTERNAL_MODERATION_*'"
    static let member = "uuid.id == 'alice'"
    static let liveChannels = "(type == 'direct' || type == 'group') && !(status == 'deleted')"
    static let invited = "status == 'pending'"

    static let all = [notInternal, notInternalGeneral, internalGeneral, internalAny, member, liveChannels, invited]
}

/// A user's memberships: a normal channel, the internal moderation channel, a channel with no
/// metadata, and one pending invitation (membership type `x`, channel type `group`).
enum FilterFixture {
    static func channel(_ id: String, _ fields: [String: JSONValue]) -> StoredObject {
        StoredObject(id: id, fields: fields, updated: "2024-01-0\(id.count % 9 + 1)T00:00:00.000000Z", eTag: "e")
    }

    static let channels: [String: StoredObject] = [
        "general": channel("general", ["name": "General", "type": "group", "status": "active", "custom": ["team": "ios", "level": 3]]),
        "PUBNUB_INTERNAL_MODERATION_general": channel("PUBNUB_INTERNAL_MODERATION_general", ["type": "internal"]),
        "invite": channel("invite", ["name": "Invite", "type": "group"]),
    ]

    static let memberships: [(other: String, membership: StoredMembership)] = [
        ("general", StoredMembership(status: "active", custom: ["role": "admin"], updated: "2024-02-01T00:00:00Z", eTag: "m1")),
        ("PUBNUB_INTERNAL_MODERATION_general", StoredMembership(updated: "2024-02-02T00:00:00Z", eTag: "m2")),
        ("invite", StoredMembership(status: "pending", type: "x", updated: "2024-02-03T00:00:00Z", eTag: "m3")),
        ("no-metadata", StoredMembership(status: "active", updated: "2024-02-04T00:00:00Z", eTag: "m4")),
    ]

    /// The channel ids of the memberships `filter` keeps (nil: refused).
    static func kept(_ filter: String) -> [String]? {
        guard let parsed = ObjectFilter(filter, listing: .memberships) else { return nil }
        return memberships.filter { parsed.matches(membership: $0.membership, other: $0.other, otherObject: channels[$0.other]) }.map(\.other)
    }

    /// Whether `filter` holds for the `general` channel as a channels listing sees it.
    static func holdsForGeneral(_ filter: String) -> Bool? {
        let general = channels["general"]!
        return ObjectFilter(filter)?.matches(id: general.id, fields: general.fields, updated: general.updated)
    }
}

@Suite("App Context filters: the grammar the Chat SDK sends, and nothing the simulator cannot read")
struct ObjectFilterTests {
    @Test("! binds tighter than &&, && tighter than ||, parentheses regroup", arguments: [
        ("type == 'group' || type == 'x' && status == 'deleted'", true),  // read as a || (b && c)
        ("(type == 'group' || type == 'x') && status == 'deleted'", false),
        ("status == 'deleted' && type == 'x' || id == 'general'", true),  // (a && b) || c
        ("status == 'deleted' && (type == 'x' || id == 'general')", false),
        ("!type == 'group' || status == 'active'", true),  // (!a) || b, not !(a || b)
        ("!(type == 'group' || status == 'active')", false),
        ("!type == 'direct' && name == 'General'", true),
        ("!!(id == 'general')", true),
        ("!(id == 'general' && name == 'Other')", true),
        ("((((id == 'general'))))", true),
        ("!(!(!(id == 'general')))", false),
    ])
    func precedence(filter: String, expected: Bool) {
        #expect(FilterFixture.holdsForGeneral(filter) == expected, "\(filter)")
    }

    @Test("every comparison operator, both quotes, escapes, custom values and missing fields", arguments: [
        ("id != 'x'", true), ("name < 'H'", true), ("name <= 'General'", true), ("name > 'G'", true),
        ("name >= 'Gz'", false), ("updated >= '2024-01-01'", true), ("updated < '2024-01-01'", false),
        (#"name == "General""#, true), (#"name == 'Gen\eral'"#, true), (#"name == "Gen\"eral""#, false),
        ("id like 'gen*'", true), ("custom.team == 'ios'", true), ("custom.level == '3'", true),
        ("custom.level > '2'", true), ("custom.missing == 'x'", false), ("custom.missing != 'x'", true),
    ])
    func comparisons(filter: String, expected: Bool) {
        #expect(FilterFixture.holdsForGeneral(filter) == expected, "\(filter)")
    }

    @Test("a backslash keeps a quote inside a quoted value")
    func escapedQuote() throws {
        let filter = try ObjectFilter(parsing: #"name == 'O\'Brien' && custom.note == "say \"hi\"""#)
        #expect(filter.matches(id: "u", fields: ["name": "O'Brien", "custom": ["note": #"say "hi""#]], updated: ""))
    }

    @Test("LIKE takes * at the start, in the middle and at the end", arguments: [
        ("*eral", true), ("gen*", true), ("gen*al", true), ("g*n*l", true), ("*ner*", true), ("*", true),
        ("general", true), ("gen", false), ("*x", false), ("x*", false), ("g*x*l", false), ("gen*alx", false),
        ("**general**", true), ("general*general", false),
    ])
    func like(pattern: String, expected: Bool) {
        #expect(FilterFixture.holdsForGeneral("id LIKE '\(pattern)'") == expected, "\(pattern)")
        #expect(ObjectFilter.like("general", pattern) == expected)
    }

    @Test("the Chat SDK's membership filters tell internal channels from normal ones", arguments: [
        (ChatSDKFilters.notInternal, ["general", "invite", "no-metadata"]),
        (ChatSDKFilters.notInternalGeneral, ["general"]),
        (ChatSDKFilters.internalGeneral, ["PUBNUB_INTERNAL_MODERATION_general"]),
        (ChatSDKFilters.internalAny, ["PUBNUB_INTERNAL_MODERATION_general"]),
        (ChatSDKFilters.invited, ["invite"]),  // the membership's status
        ("type == 'x'", ["invite"]),  // the membership's type, not the channel's (group)
        ("channel.type == 'group'", ["general", "invite"]),
        ("channel.name LIKE '*e*' && custom.role == 'admin'", ["general"]),
        ("channel.custom.team == 'ios'", ["general"]),
        ("channel.name != 'General'", ["PUBNUB_INTERNAL_MODERATION_general", "invite", "no-metadata"]),
        ("updated > '2024-02-02'", ["PUBNUB_INTERNAL_MODERATION_general", "invite", "no-metadata"]),
    ])
    func chatSDKMemberships(filter: String, expected: [String]) {
        #expect(FilterFixture.kept(filter) == expected, "\(filter)")
    }

    @Test("the Chat SDK's channel filter keeps live direct and group channels")
    func chatSDKChannels() throws {
        let filter = try ObjectFilter(parsing: ChatSDKFilters.liveChannels)
        let channels: [(String, [String: JSONValue])] = [
            ("d", ["type": "direct", "status": "active"]), ("g", ["type": "group", "status": "deleted"]),
            ("p", ["type": "public"]), ("g2", ["type": "group"]), ("none", [:]),
        ]
        #expect(channels.filter { filter.matches(id: $0.0, fields: $0.1, updated: "") }.map(\.0) == ["d", "g2"])
    }

    @Test("a channel's members filter on the user behind uuid.")
    func members() throws {
        let users = ["alice": StoredObject(id: "alice", fields: ["name": "Alice"], updated: "", eTag: "")]
        let members = ["alice", "bob", "carol"].map { ($0, StoredMembership(status: $0 == "bob" ? "pending" : .null, updated: "", eTag: "")) }
        func kept(_ text: String) throws -> [String] {
            let filter = try ObjectFilter(parsing: text, listing: .members)
            return members.filter { filter.matches(membership: $0.1, other: $0.0, otherObject: users[$0.0]) }.map(\.0)
        }
        #expect(try kept(ChatSDKFilters.member) == ["alice"])
        #expect(try kept("uuid.name LIKE 'Al*' || status == 'pending'") == ["alice", "bob"])
        #expect(try kept("!(uuid.id == 'alice')") == ["bob", "carol"])
        #expect(throws: ObjectFilter.ParseError.unknownField("channel.id", offset: 0)) {
            try ObjectFilter(parsing: ChatSDKFilters.internalAny, listing: .members)
        }
    }

    @Test("what a listing cannot read is refused with the reason", arguments: [
        ("", ObjectFilter.Listing.objects, ObjectFilter.ParseError.expected("a field name, ! or (", offset: 0)),
        ("name = 'x'", .objects, .unexpectedCharacter("=", offset: 5)),
        ("name == x", .objects, .expected("a quoted value", offset: 8)),
        ("name == 'x", .objects, .unterminatedValue(offset: 8)),
        (#"name == 'x\'"#, .objects, .unterminatedValue(offset: 8)),
        ("name == 'x' &&", .objects, .expected("a field name, ! or (", offset: 14)),
        ("name == 'x')", .objects, .expected("&&, || or the end of the filter", offset: 11)),
        ("(name == 'x'", .objects, .expected(")", offset: 12)),
        ("()", .objects, .expected("a field name, ! or (", offset: 1)),
        ("name 'x'", .objects, .expected("a comparison operator", offset: 5)),
        ("name & 'x'", .objects, .unexpectedCharacter("&", offset: 5)),
        ("name == 'x' | id == 'y'", .objects, .unexpectedCharacter("|", offset: 12)),
        ("nom == 'x'", .objects, .unknownField("nom", offset: 0)),
        ("description == 'x'", .objects, .unknownField("description", offset: 0)),
        ("custom. == 'x'", .objects, .unknownField("custom.", offset: 0)),
        ("custom.a.b == 'x'", .objects, .unknownField("custom.a.b", offset: 0)),
        ("channel.id == 'x'", .objects, .unknownField("channel.id", offset: 0)),
        ("uuid.id == 'alice'", .memberships, .unknownField("uuid.id", offset: 0)),
        ("id == 'general'", .memberships, .unknownField("id", offset: 0)),
        ("channel.eTag == 'x'", .memberships, .unknownField("channel.eTag", offset: 0)),
        ("name == 'é' && é", .objects, .unexpectedCharacter("é", offset: 15)),
    ])
    func refusals(filter: String, listing: ObjectFilter.Listing, error: ObjectFilter.ParseError) {
        #expect(throws: error) { try ObjectFilter(parsing: filter, listing: listing) }
        #expect(ObjectFilter(filter, listing: listing) == nil)
    }

    @Test("a filter over 16,384 characters or nested deeper than 32 is refused, without deep recursion; the Chat SDK's longest mark all read filter fits")
    func bounds() throws {
        let comparison = "id == 'general'"
        let nested = { (depth: Int) in String(repeating: "(", count: depth) + comparison + String(repeating: ")", count: depth) }
        #expect(FilterFixture.holdsForGeneral(nested(32)) == true)
        #expect(throws: ObjectFilter.ParseError.tooDeep(offset: 32)) { try ObjectFilter(parsing: nested(33)) }
        #expect(FilterFixture.holdsForGeneral(String(repeating: "!", count: 32) + comparison) == true)
        #expect(throws: ObjectFilter.ParseError.tooDeep(offset: 32)) {
            try ObjectFilter(parsing: String(repeating: "!(", count: 17) + comparison + String(repeating: ")", count: 17))
        }

        let long = (0..<2_000).map { "id == '\($0)'" }.joined(separator: " || ")
        #expect(long.count > 16_384)
        #expect(throws: ObjectFilter.ParseError.tooLong) { try ObjectFilter(parsing: long) }
        let fits = "name == '" + String(repeating: "a", count: 16_384 - 10) + "'"
        #expect(fits.count == 16_384 && ObjectFilter(fits) != nil)
        #expect(throws: ObjectFilter.ParseError.tooLong) { try ObjectFilter(parsing: fits + " ") }
        #expect(throws: ObjectFilter.ParseError.tooLong) { try ObjectFilter(parsing: String(repeating: "(", count: 100_000)) }
        #expect(throws: ObjectFilter.ParseError.tooLong) { try ObjectFilter(parsing: String(repeating: "🎉", count: 20_000)) }
        // The Chat SDK's mark all read: 100 channels of 92 characters.
        let markAll = (0..<100).map { "channel.id == '\(String(format: "%03d", $0))\(String(repeating: "c", count: 89))'" }
            .joined(separator: " || ")
        #expect(ObjectFilter(markAll, listing: .memberships) != nil)
        // A long flat chain is a loop, not recursion.
        let chain = (0..<150).map { _ in "id=='x'" }.joined(separator: "&&")
        #expect(chain.count <= 2_048 && FilterFixture.holdsForGeneral(chain) == false)
    }

    @Test("2,000 random, generated, mutated and truncated filters never crash: each parses or is refused")
    func fuzz() {
        var random = SplitMix64(seed: 0xF117_E125)
        func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &random)] }
        let pieces = [
            "(", ")", "!", "&&", "||", "==", "!=", "<", "<=", ">", ">=", "LIKE", "like", "id", "name", "status", "type",
            "updated", "channel.id", "channel.name", "uuid.id", "custom.team", "custom.", "'general'", "'PUBNUB_*'", "\"a\\\"b\"",
            "'", "\"", "\\", " ", "&", "|", "=", "*", ".", "é", "🎉", "\u{301}", "\0", "\n",
        ]
        let chatSDK: [(String, ObjectFilter.Listing)] = [
            (ChatSDKFilters.notInternal, .memberships), (ChatSDKFilters.notInternalGeneral, .memberships),
            (ChatSDKFilters.internalGeneral, .memberships), (ChatSDKFilters.internalAny, .memberships),
            (ChatSDKFilters.member, .members), (ChatSDKFilters.liveChannels, .objects), (ChatSDKFilters.invited, .memberships),
        ]
        let fields: [ObjectFilter.Listing: [String]] = [
            .objects: ["id", "name", "updated", "type", "status", "custom.team"],
            .memberships: ["status", "type", "updated", "custom.role", "channel.id", "channel.name", "channel.custom.team"],
            .members: ["status", "type", "uuid.id", "uuid.name", "uuid.updated"],
        ]
        /// A random well-formed filter, at most `depth` levels of `!` and parentheses deep.
        func generated(_ listing: ObjectFilter.Listing, depth: Int) -> String {
            switch depth == 0 ? 0 : Int.random(in: 0..<5, using: &random) {
            case 0, 1:
                let value = pick(["general", "PUBNUB_INTERNAL_MODERATION_*", "*a*", #"it\'s"#, "", "é🎉"])
                return "\(pick(fields[listing]!)) \(pick(["==", "!=", "<", "<=", ">", ">=", "LIKE", "like"])) '\(value)'"
            case 2: return "!" + generated(listing, depth: depth - 1)
            case 3: return generated(listing, depth: depth - 1) + " && " + generated(listing, depth: depth - 1)
            default: return "(" + generated(listing, depth: depth - 1) + " || " + generated(listing, depth: depth - 1) + ")"
            }
        }
        var parsed = 0, refused = 0
        for round in 0..<2_000 {
            var listing = pick([ObjectFilter.Listing.objects, .memberships, .members])
            var text: String
            var wellFormed = false
            switch round % 5 {
            case 0:
                text = (0..<Int.random(in: 0...24, using: &random)).map { _ in pick(pieces) }.joined(separator: pick(["", " "]))
            case 1:
                let (source, its) = pick(chatSDK)
                (text, listing) = (String(source.prefix(Int.random(in: 0...source.count, using: &random))), its)
            case 2:
                let (source, its) = pick(chatSDK)
                var characters = Array(source)
                let at = Int.random(in: 0..<characters.count, using: &random)
                if Bool.random(using: &random) { characters.remove(at: at) }
                characters.insert(contentsOf: Array(pick(pieces)), at: at)
                (text, listing) = (String(characters), its)
            case 3:
                (text, wellFormed) = (generated(listing, depth: 5), true)
            default:
                let whole = generated(listing, depth: 5)
                text = String(whole.prefix(Int.random(in: 0...whole.count, using: &random)))
            }
            do {
                let filter = try ObjectFilter(parsing: text, listing: listing)
                parsed += 1
                #expect(ObjectFilter(text, listing: listing) != nil)
                for (other, membership) in FilterFixture.memberships {
                    _ = filter.matches(membership: membership, other: other, otherObject: FilterFixture.channels[other])
                    _ = filter.matches(id: other, fields: FilterFixture.channels[other]?.fields ?? [:], updated: membership.updated)
                }
            } catch {
                refused += 1
                #expect(!wellFormed, "a well-formed filter was refused (\(error)): \(text)")
                #expect(ObjectFilter(text, listing: listing) == nil, "case \(round): \(text.debugDescription)")
            }
        }
        #expect(parsed + refused == 2_000)
        #expect(parsed > 400 && refused > 400, "parsed \(parsed), refused \(refused)")
    }

    @Test("listing a user's memberships over the wire with the Chat SDK's filter leaves out the internal channel")
    func overTheWire() async throws {
        let server = PubNubServer(clock: VirtualClock())
        func send(_ method: String, _ target: String, body: String? = nil) async throws -> (status: Int, ids: [String]) {
            let raw = RawRequest(
                method: method, target: target, headers: body == nil ? [:] : ["Content-Type": "application/json"], body: body.map { Data($0.utf8) })
            let response = await server.respond(try #require(raw.decoded(), "unreadable: \(target)"))
            let data = try JSONValue(jsonData: response.body).objectValue?["data"]?.arrayValue ?? []
            return (response.status, data.compactMap { $0.objectValue?["channel"]?.objectValue?["id"]?.stringValue })
        }
        let set = #"{"set":[{"channel":{"id":"general"}},{"channel":{"id":"PUBNUB_INTERNAL_MODERATION_general"}},{"channel":{"id":"random"}}]}"#
        let all = try await send("PATCH", "/v2/objects/demo/uuids/alice/channels", body: set)
        #expect(all.status == 200 && all.ids == ["PUBNUB_INTERNAL_MODERATION_general", "general", "random"])

        // As a client escapes it: every reserved character, the space as %20.
        let escaped = "%21%28channel.id%20LIKE%20%27PUBNUB_INTERNAL_MODERATION_%2A%27%29"
        for filter in [escaped, PercentEncoding.queryComponent(ChatSDKFilters.notInternal)] {
            let listed = try await send("GET", "/v2/objects/demo/uuids/alice/channels?include=status&filter=\(filter)")
            #expect(listed.status == 200 && listed.ids == ["general", "random"], "\(filter)")
        }
        let client = try PubNubClient.simulated(InProcessTransport(server: server), userId: "alice")
        let page = try await client.appContext.getMemberships(userId: "alice", ObjectListQuery(filter: ChatSDKFilters.notInternalGeneral), as: DefaultChatCustom.self)
        #expect(page.data.map(\.channel.id) == ["general"])

        // A refused filter is PubNub's 400, and a PATCH carrying one changes nothing.
        let bad = try await send("PATCH", "/v2/objects/demo/uuids/alice/channels?filter=%21%28channel.id",
                                 body: #"{"delete":[{"channel":{"id":"general"}}]}"#)
        #expect(bad.status == 400)
        #expect(try await send("GET", "/v2/objects/demo/uuids/alice/channels").ids.count == 3)
    }
}

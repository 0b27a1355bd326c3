import Foundation
import Testing

/// `pnreplicate search` (docs/search.md): the stored messages, found offline, as a table or JSON.
@Suite("pnreplicate search")
struct SearchCommandTests {
    @Test("finds sent-offline messages by a word, a prefix or a Chinese word, in one channel; --json pages; nothing found says so")
    func search() async throws {
        let store = CLI.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: (store as NSString).deletingLastPathComponent) }
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_PUBLISH_KEY": "pub", "PUBNUB_SUBSCRIBE_KEY": "sub"]
        for (channel, text) in [("general", "Café at noon?"), ("general", "reconnecting now"), ("random", "cafe closed"), ("general", "我住在東京都")] {
            let sent = try await CLI.run(["send", "--store", store, "--channel", channel, "--text", text], environment: env)
            try #require(sent.status == 0, "\(sent.stderr)")
        }
        let table = try await CLI.run(["search", "cafe", "--store", store, "--channel", "general"], environment: env)
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("Café at noon?") && !table.stdout.contains("cafe closed"), "\(table.stdout)")

        let json = try await CLI.run(["search", "cafe", "--store", store, "--json", "--limit", "1"], environment: env)
        let page = try CLI.json(json.stdout)
        #expect((page["messages"] as? [Any])?.count == 1 && page["hasMore"] as? Bool == true && page["unindexed"] as? Int == 0)

        let prefix = try await CLI.run(["search", "reco", "--store", store], environment: env)
        #expect(prefix.stdout.contains("reconnecting now"), "\(prefix.stdout)")
        let chinese = try await CLI.run(["search", "東京", "--store", store], environment: env)
        #expect(chinese.stdout.contains("我住在東京都"), "\(chinese.stdout)")

        let none = try await CLI.run(["search", "zebra", "--store", store], environment: env)
        #expect(none.status == 0 && none.stdout.contains("no stored message matches zebra"), "\(none.stdout)")
        let bad = try await CLI.run(["search", "cafe", "--store", store, "--limit", "0"], environment: env)
        #expect(bad.status == 1 && bad.stderr.contains("limit must be 1-100"), "\(bad.stderr)")
    }
}

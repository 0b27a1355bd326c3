// Search benchmark (issue 52): `SearchBenchmarks [messages] [channels]`, default 1,000,000 messages
// over 500 channels, release build, by hand (docs/performance.md, docs/search.md).
//
// Fills a store through `ChatStore.load(messages:)` (the store's indexer builds the index after
// those commits, as after an app's sync; the stored rate and the rate until all is indexed are
// printed), then times the first page (20 hits) of `queries.search` for a mix of queries, 60 of
// each kind: a rare word (in about 10 messages), a common word (in about 1 in 8), a prefix of 3
// letters, a common word in one channel (each by relevance and newest first), and two words.
// Each kind's raw limit is the index alone on a raw connection: the same words' newest 20 keys,
// no join, no channel, no rank. Prints p50 and p95 of each and the ratio.
import BenchmarkSupport
import Foundation
import GRDB
import ReplicaModel
import ReplicaStore

let arguments = CommandLine.arguments.dropFirst()
let count = arguments.first.flatMap(Int.init) ?? 1_000_000
let channelCount = arguments.dropFirst().first.flatMap(Int.init) ?? 500
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-search-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

/// A deterministic generator (no system randomness: the same store every run).
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

// Words: 40 common ones, 5,000 medium ones (a syllable soup), and rare codes.
let common = ["the", "meeting", "deploy", "lunch", "report", "review", "today", "tomorrow", "please", "thanks",
              "release", "client", "invoice", "update", "call", "team", "project", "budget", "schedule", "question",
              "issue", "fixed", "ready", "later", "morning", "office", "design", "ticket", "server", "launch",
              "draft", "agenda", "notes", "coffee", "weekend", "travel", "support", "account", "order", "status"]
let syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "du", "zan", "bel", "cor", "fin", "gra", "hul"]
let medium: [String] = {
    var words: [String] = []
    var generator = SplitMix(state: 42)
    while words.count < 5_000 {
        var word = ""
        for _ in 0..<(2 + generator.below(3)) { word += syllables[generator.below(syllables.count)] }
        words.append(word)
    }
    return words
}()
func rareCode(_ i: Int) -> String { "zx\(String(i, radix: 36))q" }

func text(_ i: Int, _ random: inout SplitMix) -> String {
    var words: [String] = []
    let length = 6 + random.below(14)
    for _ in 0..<length {
        let roll = random.below(100)
        if roll < 35 { words.append(common[random.below(common.count)]) } else { words.append(medium[random.below(medium.count)]) }
    }
    if i % 10 == 0 { words.insert(rareCode(random.below(max(1, count / 100))), at: random.below(words.count)) }
    return words.joined(separator: " ")
}

// 1. Fill.
let path = directory.appendingPathComponent("search.sqlite").path
let store = try ChatStore<DefaultChatCustom>.open(at: path)
var random = SplitMix(state: 7)
let fillStart = ContinuousClock.now
let chunk = 20_000
var written = 0
while written < count {
    let end = min(count, written + chunk)
    let messages = try (written..<end).map { i in
        try ChatMessage<FlatCustom>(
            id: "m\(i)", text: text(i, &random), createdAt: ISOTimestamp(nanoseconds: Int64(1_700_000_000 + i) * 1_000_000_000, fractionDigits: 3),
            timetoken: Timetoken(rawValue: 17_000_000_000_000_000 + UInt64(i) * 10_000), userId: "user-\(i % 200)",
            channelId: "channel-\(i % channelCount)")
    }
    let report = try await store.load(messages: messages)
    precondition(report.succeeded, "load failed: \(report.failedBatches)")
    written = end
}
let fill = ContinuousClock.now - fillStart
let fillSeconds = Double(fill.components.seconds) + Double(fill.components.attoseconds) / 1e18
// The index is built after the commits, in the background while the fill runs; a search read
// once waits for it to catch up: the time to that first answer is what indexing still owed.
let catchUpStart = ContinuousClock.now
_ = try await store.fetch(store.queries.search(MessageSearch("zzzz-nothing")))
let catchUp = ContinuousClock.now - catchUpStart
let indexedSeconds = fillSeconds + Double(catchUp.components.seconds) + Double(catchUp.components.attoseconds) / 1e18
print("filled \(count) messages over \(channelCount) channels in \(String(format: "%.1f", fillSeconds)) s (\(Int(Double(count) / fillSeconds)) messages/s stored), "
    + "all indexed after \(String(format: "%.1f", indexedSeconds)) s (\(Int(Double(count) / indexedSeconds)) messages/s)")
let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
print("store file: \(bytes / 1_048_576) MB")

// 2. Queries.
struct Kind {
    var name: String
    var make: (Int, inout SplitMix) -> MessageSearch
}
func newest(_ search: MessageSearch) -> MessageSearch {
    var search = search
    search.order = .newest
    return search
}
let kinds: [Kind] = [
    Kind(name: "rare word") { _, r in MessageSearch(rareCode(r.below(max(1, count / 100)))) },
    Kind(name: "common word") { _, r in MessageSearch(common[r.below(common.count)]) },
    Kind(name: "common word, newest") { _, r in newest(MessageSearch(common[r.below(common.count)])) },
    Kind(name: "prefix (3 letters)") { _, r in MessageSearch(String(medium[r.below(medium.count)].prefix(3))) },
    Kind(name: "prefix (3 letters), newest") { _, r in newest(MessageSearch(String(medium[r.below(medium.count)].prefix(3)))) },
    Kind(name: "common word, one channel") { _, r in MessageSearch(common[r.below(common.count)], channels: ["channel-\(r.below(channelCount))"]) },
    Kind(name: "common word, one channel, newest") { _, r in
        newest(MessageSearch(common[r.below(common.count)], channels: ["channel-\(r.below(channelCount))"]))
    },
    Kind(name: "two words") { _, r in MessageSearch(common[r.below(common.count)] + " " + medium[r.below(medium.count)]) },
]
let raw = try rawConnection(toStoreAt: path)
let perKind = 60

func millis(_ d: Duration) -> Double { Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15 }
func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

print("")
print("| query | hits (median) | search p50 | search p95 | raw p95 | p95 ÷ raw |")
print("|---|---|---|---|---|---|")
var worstP95 = 0.0
for kind in kinds {
    var queryRandom = SplitMix(state: UInt64(kind.name.utf8.count) &* 31)
    var times: [Double] = []
    var rawTimes: [Double] = []
    var hits: [Int] = []
    for i in 0..<perKind {
        let search = kind.make(i, &queryRandom)
        let clock = ContinuousClock()
        var page: MessageSearchResults<FlatCustom>?
        let elapsed = try await clock.measure { page = try await store.fetch(store.queries.search(search)) }
        times.append(millis(elapsed))
        hits.append(page?.messages.count ?? 0)
        // The raw limit: the index alone, the same words' newest 20 keys (no channel, no join,
        // no filter, no rank).
        let match = search.text.split(separator: " ").enumerated().map { index, word in
            index == search.text.split(separator: " ").count - 1 && word.count >= 2 ? "\"\(word)\"*" : "\"\(word)\""
        }.joined(separator: " ")
        let rawElapsed = try await clock.measure {
            _ = try await raw.read { db in
                try Int64.fetchAll(
                    db, sql: "SELECT rowid FROM message_search WHERE message_search MATCH ? ORDER BY rowid DESC LIMIT 20",
                    arguments: ["{folded} : (\(match))"])
            }
        }
        rawTimes.append(millis(rawElapsed))
    }
    let p95 = percentile(times, 0.95)
    worstP95 = max(worstP95, p95)
    let rawP95 = percentile(rawTimes, 0.95)
    print("| \(kind.name) | \(percentile(hits.map(Double.init), 0.5)) | \(String(format: "%.1f", percentile(times, 0.5))) ms | \(String(format: "%.1f", p95)) ms | \(String(format: "%.1f", rawP95)) ms | \(String(format: "%.2f", p95 / max(rawP95, 0.001))) |")
}
print("")
print("bench: search_fill_per_second \(Int(Double(count) / fillSeconds))")
print("bench: search_indexed_per_second \(Int(Double(count) / indexedSeconds))")
print("bench: search_p95_ms \(String(format: "%.1f", worstP95))")

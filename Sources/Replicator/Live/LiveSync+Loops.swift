import Foundation
import PubNubWire
import ReplicaModel

/// One subscribe connection of a live sync: a share of the followed channels whose names fit
/// PubNub's request-line limit, its own cursor, and its long poll in flight (`docs/live.md`,
/// "Many channels").
///
/// A live sync following a few hundred channels has one loop; thousands of channels are cut into
/// several, each under ``LiveSyncOptions/subscribeBytes``. A channel stays in its loop while it is
/// followed (moving it would continue it from another loop's cursor), so a membership that comes
/// or goes changes one loop's request, never the others'.
struct SubscribeLoop: Sendable {
    /// The followed channels it subscribes, sorted: named in its request, or, for the loop of the
    /// channel groups, the channels the groups cover (``LiveSyncOptions/channelGroups``).
    var channels: [String] = []
    /// The channel groups it subscribes by name (`channel-group=`): only the first loop, when
    /// the app's server keeps groups of the user's memberships.
    var groups: [String] = []
    /// The presence channels it subscribes (as `<channel>-pnpres`), sorted.
    var presence: [String] = []
    /// Its cursor: nil before its handshake and after a reset.
    var cursor: SubscribeCursor?
    /// Its long poll in flight, if any.
    var poll: InFlightPoll?

    /// The channels its request names: none for the loop of the channel groups (they cover them).
    var named: [String] { groups.isEmpty ? channels : [] }

    /// The bytes its names take in a subscribe request line (the groups' in its query).
    var bytes: Int { Self.cost(named) + Self.cost(presence.map { $0 + "-pnpres" }) + Self.cost(groups) }

    /// The bytes `names` take in a subscribe path, each with its separator.
    static func cost(_ names: [String]) -> Int { names.reduce(0) { $0 + cost($1) } }

    /// The bytes one name takes in a subscribe path, percent-encoded, with its `,` (which a path
    /// keeps literal).
    static func cost(_ name: String) -> Int { PercentEncoding.pathSegmentLength(name) + 1 }

    /// `loops` with `channels` and `presence` (the presence channels, by channel name) placed:
    /// what is no longer followed leaves its loop, a loop left empty goes, and what is new joins the
    /// first loop with room under `budget` bytes (a presence channel its channel's loop when it
    /// fits), or a new loop. What stays keeps its loop and the loop its cursor.
    ///
    /// With `groups`, the first loop subscribes them by name and holds `covered` (the followed
    /// channels they cover, which no other loop names); its cursor stays while the groups do.
    static func assign(
        channels: [String], presence: [String], groups: [String] = [], covered: [String] = [], to loops: [SubscribeLoop], budget: Int
    ) -> [SubscribeLoop] {
        let wanted = Set(channels).subtracting(covered), wantedPresence = Set(presence)
        var result: [SubscribeLoop] = []
        var bytes: [Int] = []
        var placed = Set<String>(), placedPresence = Set<String>()
        if !groups.isEmpty {
            var loop = loops.first { !$0.groups.isEmpty && $0.groups == groups } ?? SubscribeLoop(groups: groups)
            loop.channels = covered.sorted()
            loop.presence = []
            result.append(loop)
            bytes.append(loop.bytes)
        }
        for var loop in loops where loop.groups.isEmpty {
            loop.channels = loop.channels.filter { wanted.contains($0) }
            loop.presence = loop.presence.filter { wantedPresence.contains($0) }
            guard !loop.channels.isEmpty || !loop.presence.isEmpty else { continue }
            placed.formUnion(loop.channels)
            placedPresence.formUnion(loop.presence)
            bytes.append(loop.bytes)
            result.append(loop)
        }
        var home: [String: Int] = [:]
        for (index, loop) in result.enumerated() where loop.groups.isEmpty { for channel in loop.channels { home[channel] = index } }
        /// The loop `cost` more bytes fit in (`preferred` first), or a new one.
        func room(for cost: Int, preferred: Int?) -> Int {
            if let preferred, bytes[preferred] + cost <= budget { return preferred }
            if let index = bytes.indices.first(where: { result[$0].groups.isEmpty && bytes[$0] + cost <= budget }) { return index }
            result.append(SubscribeLoop())
            bytes.append(0)
            return result.count - 1
        }
        for channel in channels where !placed.contains(channel) && wanted.contains(channel) {
            let index = room(for: cost(channel), preferred: nil)
            result[index].channels.append(channel)
            bytes[index] += cost(channel)
            home[channel] = index
        }
        for channel in presence where !placedPresence.contains(channel) {
            let index = room(for: cost(channel + "-pnpres"), preferred: home[channel])
            result[index].presence.append(channel)
            bytes[index] += cost(channel + "-pnpres")
        }
        for index in result.indices {
            result[index].channels.sort()
            result[index].presence.sort()
        }
        return result
    }
}

/// A live sync's subscribe loops and their long polls in flight (``LiveSync``'s `subscription`).
struct SubscribeLoops: Sendable {
    /// The loops, each a share of the channels with its own cursor and long poll.
    var loops: [SubscribeLoop] = []
    /// The bytes of channel names one subscribe may take: ``LiveSyncOptions/subscribeBytes``,
    /// halved after each 414 (the request line was too long for the server all the same).
    private(set) var budget: Int
    /// Which long polls ended (each reports its number), and those ended but not taken yet.
    let completions = PollCompletions()
    private var answered = Set<UInt64>()
    private var nextPollId: UInt64 = 0

    init(budget: Int) { self.budget = max(1, budget) }

    /// Places the followed channels in loops (``SubscribeLoop/assign(channels:presence:to:budget:)``):
    /// a loop left with nothing goes, and its long poll with it.
    mutating func place(channels: [String], presence: [String], groups: [String] = [], covered: [String] = []) {
        let before = loops.compactMap(\.poll)
        loops = SubscribeLoop.assign(channels: channels, presence: presence, groups: groups, covered: covered, to: loops, budget: budget)
        let kept = Set(loops.compactMap(\.poll?.id))
        for poll in before where !kept.contains(poll.id) { poll.answer.cancel() }
        answered.formIntersection(kept)
    }

    /// Sends `request` for loop `index` through `client` now, replacing (and cancelling) the poll
    /// it had in flight.
    mutating func send(_ request: SubscribeRequest, loop index: Int, client: PubNubClient) {
        if let old = loops[index].poll {
            old.answer.cancel()
            answered.remove(old.id)
        }
        let completions = completions
        nextPollId += 1
        let id = nextPollId
        let answer = Task {
            defer { completions.ended(id) }
            return try await client.subscribe(request)
        }
        loops[index].poll = InFlightPoll(request: request, answer: answer, id: id)
    }

    /// The first loop whose poll ended, if one did.
    var answeredLoop: Int? {
        loops.indices.first { index in loops[index].poll.map { answered.contains($0.id) } ?? false }
    }

    /// Notes that poll `id` ended; a poll dropped meanwhile (its loop changed or went) is forgotten.
    mutating func ended(_ id: UInt64) {
        if loops.contains(where: { $0.poll?.id == id }) { answered.insert(id) }
    }

    /// Takes loop `index`'s poll, which ended.
    mutating func take(loop index: Int) -> InFlightPoll? {
        defer { loops[index].poll = nil }
        if let poll = loops[index].poll { answered.remove(poll.id) }
        return loops[index].poll
    }

    /// Cancels every loop's poll (their answers are never applied) and returns them.
    @discardableResult
    mutating func dropPolls() -> [InFlightPoll] {
        let polls = loops.compactMap(\.poll)
        for poll in polls { poll.answer.cancel() }
        for index in loops.indices { loops[index].poll = nil }
        answered = []
        return polls
    }

    /// A 414 for the loops at `indices`: the budget halves (from the longest of them), and every
    /// loop goes, to be made again from it. Returns the longest loop's bytes and the new budget.
    mutating func shrink(_ indices: [Int]) -> (longest: Int, budget: Int) {
        let longest = indices.map { loops[$0].bytes }.max() ?? budget
        budget = max(1, min(budget, longest) / 2)
        dropPolls()
        loops = []
        return (longest, budget)
    }
}

/// A long poll sent and not yet taken.
struct InFlightPoll: Sendable {
    /// What was sent: the answer is taken only for exactly this request.
    let request: SubscribeRequest
    /// The answer, when it comes.
    let answer: Task<SubscribeAnswer, any Error>
    /// Its number, which the completion signal carries.
    let id: UInt64
}

/// Which long polls have answered: each in-flight poll reports its number when its request ends,
/// and a live sync waits for the first of its loops' polls to answer.
final class PollCompletions: Sendable {
    private let stream: AsyncStream<UInt64>
    private let continuation: AsyncStream<UInt64>.Continuation

    init() { (stream, continuation) = AsyncStream<UInt64>.makeStream() }

    /// Reports that poll `id` ended (answered or failed).
    func ended(_ id: UInt64) { continuation.yield(id) }

    /// The next poll that ended; nil when the waiting task is cancelled.
    func next() async -> UInt64? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }

    deinit { continuation.finish() }
}

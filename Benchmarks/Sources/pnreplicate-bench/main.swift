// pnreplicate-bench: every performance figure of docs/performance.md in one table.
//
//     swift build -c release --product pnreplicate
//     swift build -c release --package-path Benchmarks --scratch-path .build
//     .build/release/pnreplicate-bench [--runs 5] [--quick] [--peer-only] [--machine]
//     .build/release/pnreplicate-bench --compare BASE [--runs 5] [--quick] [--peer-only]
//
// Runs the benchmark executables built beside it (ReconcilerBenchmarks, OutboxBenchmarks,
// LiveBenchmarks) and the `pnreplicate` command itself, each `--runs` times (default 5), reads the
// `bench: <key> <value>` lines they print, and prints the median of each figure next to the raw
// limit measured in the same run, with their ratio. Each run is a fresh process, so one run's
// caches and heap do not flatter the next. Last, the peer (issue 51): the official Python SDK
// (Benchmarks/peer/sdk_peer.py) against `pnreplicate` on the same work and the same simulator
// (`--peer-only` runs only that). `--quick` runs everything once on smaller inputs, to check the
// command works. `--machine` also prints every figure of the tables as a `bench: <key> <value>`
// line (the ratios' keys end in `.ratio`). Run by hand, in release; never in CI.
//
// `--compare BASE` measures two builds for an issue's before and after: BASE is a folder holding
// another build's binaries (the same set as beside this one, `pnreplicate-bench` included). Each
// of `--runs` rounds runs `BASE/pnreplicate-bench --runs 1 --machine` and this folder's, with the
// other flags given, alternating which goes first, and it prints the median of every figure of
// each build with the change. Its ratios lead: measured in the same run, they hold on a busy
// machine where the absolute rates drift.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")
let peerOnly = arguments.contains("--peer-only")
let machineReadable = arguments.contains("--machine")
let runs = quick ? 1 : (arguments.firstIndex(of: "--runs").flatMap { arguments.count > $0 + 1 ? Int(arguments[$0 + 1]) : nil } ?? 5)
let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-bench-\(getpid())")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }

// `pnreplicate send` refuses to queue for PubNub's origin without keys; the CLI rows only enqueue
// and read the store (nothing is sent), so placeholder keys do, unless real ones are set.
setenv("PUBNUB_PUBLISH_KEY", "bench", 0)
setenv("PUBNUB_SUBSCRIBE_KEY", "bench", 0)

/// The commands it runs, all expected beside it (the two builds above share one scratch path).
let buildCommands = """
    swift build -c release --product pnreplicate
    swift build -c release --package-path Benchmarks --scratch-path .build
    """
let expected = ["ReconcilerBenchmarks", "OutboxBenchmarks", "LiveBenchmarks", "RequestBenchmarks", "pnreplicate"]
for binary in expected where !FileManager.default.isExecutableFile(atPath: binaries.appendingPathComponent(binary).path) {
    FileHandle.standardError.write(Data("pnreplicate-bench: no \(binary) in \(binaries.path); build both, from the repository's root:\n\(buildCommands)\n".utf8))
    exit(1)
}

/// What one child process did.
struct ChildRun {
    var output: String
    var seconds: Double
    /// Seconds from start to the first line on stdout.
    var firstLine: Double?
    var peakRSSMegabytes: Double
    var status: Int32
}

func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Peak RSS is read by `/usr/bin/time` around the child when it is installed: `wait4`'s
/// `ru_maxrss` of a child started with `posix_spawn` (which shares this process's memory until
/// `exec`) starts from this process's own peak.
let timeTool = FileManager.default.isExecutableFile(atPath: "/usr/bin/time") ? "/usr/bin/time" : nil

/// Runs `binary` (built beside this one) with `args`, stdout captured (stderr to /dev/null), and
/// measures it.
func run(_ binary: String, _ args: [String]) -> ChildRun {
    run(path: binaries.appendingPathComponent(binary).path, args)
}

/// Runs the executable at `target` with `args`, as ``run(_:_:)`` does; its stderr passed through
/// with `showErrors`.
func run(path target: String, _ args: [String], showErrors: Bool = false) -> ChildRun {
    let rssFile = scratch.appendingPathComponent("rss-\(UUID().uuidString)").path
    let path = timeTool ?? target
    let args = timeTool == nil ? args : ["-f", "%M", "-o", rssFile, target] + args
    var pipe: [Int32] = [0, 0]
    guard Glibc.pipe(&pipe) == 0 else { fatalError("pipe failed") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
    if !showErrors { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
    posix_spawn_file_actions_addclose(&actions, pipe[0])
    let argv = ([path] + args).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let start = now()
    guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else {
        fatalError("cannot start \(target): build it first:\n\(buildCommands)")
    }
    posix_spawn_file_actions_destroy(&actions)
    close(pipe[1])
    var output = Data()
    var firstLine: Double?
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = read(pipe[0], &buffer, buffer.count)
        if count <= 0 { break }
        if firstLine == nil, buffer[0..<count].contains(UInt8(ascii: "\n")) { firstLine = now() - start }
        output.append(contentsOf: buffer[0..<count])
    }
    close(pipe[0])
    var status: Int32 = 0
    var usage = rusage()
    wait4(pid, &status, 0, &usage)
    var peakKilobytes = Double(usage.ru_maxrss)
    if let text = try? String(contentsOfFile: rssFile, encoding: .utf8),
       let measured = text.split(separator: "\n").last.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) })
    {
        peakKilobytes = measured
    }
    try? FileManager.default.removeItem(atPath: rssFile)
    return ChildRun(
        output: String(decoding: output, as: UTF8.self), seconds: now() - start, firstLine: firstLine,
        peakRSSMegabytes: peakKilobytes / 1024, status: status)
}

/// The `bench: key value` lines of an output.
func figures(_ output: String) -> [String: Double] {
    var values: [String: Double] = [:]
    for line in output.split(separator: "\n") where line.hasPrefix("bench: ") {
        let parts = line.dropFirst(7).split(separator: " ")
        if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
    }
    return values
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Prints `rows` as a Markdown table, the first row its header, each column as wide as its widest cell.
func printTable(_ rows: [[String]]) {
    let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
    for (index, row) in rows.enumerated() {
        let cells = row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
        print("| " + cells.joined(separator: " | ") + " |")
        if index == 0 { print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|") }
    }
}

/// With `--machine`, prints each figure as a `bench: key value` line (for `--compare`).
func emit(_ pairs: [(String, Double)]) {
    guard machineReadable else { return }
    for (key, value) in pairs where !value.isNaN { print("bench: \(key) \(value)") }
}

/// Every run's figures of one benchmark, by key.
func collect(_ binary: String, _ args: [String]) -> [String: [Double]] {
    var all: [String: [Double]] = [:]
    for index in 1...runs {
        FileHandle.standardError.write(Data("\(binary) \(args.joined(separator: " ")) (run \(index) of \(runs))\n".utf8))
        let result = run(binary, args)
        guard result.status == 0 else { fatalError("\(binary) failed:\n\(result.output)") }
        for (key, value) in figures(result.output) { all[key, default: []].append(value) }
    }
    return all
}

/// A `pnreplicate simulator serve` beside the benchmark, until ``stop()``: its process and its origin
/// (`127.0.0.1:PORT`).
struct ServedSimulator {
    var pid: pid_t
    var origin: String
    /// The read end of its stdout, open until it stops (closed early, the simulator's next line
    /// would end it with SIGPIPE).
    var output: Int32

    /// Starts `pnreplicate simulator serve --port 0` with `args` and waits for its first line,
    /// `listening on http://127.0.0.1:PORT` (printed once its keyset is seeded); nil when it exits
    /// before.
    static func start(_ args: [String]) -> ServedSimulator? {
        let path = binaries.appendingPathComponent("pnreplicate").path
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { fatalError("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        let argv = ([path, "simulator", "serve", "--port", "0"] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        posix_spawn_file_actions_destroy(&actions)
        close(pipe[1])
        guard spawned == 0 else {
            close(pipe[0])
            return nil
        }
        // Not inherited by the children the benchmark starts next.
        _ = fcntl(pipe[0], F_SETFD, FD_CLOEXEC)
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(pipe[0], &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        let prefix = "listening on http://"
        let text = String(decoding: line, as: UTF8.self)
        let simulator = ServedSimulator(pid: pid, origin: String(text.dropFirst(prefix.count)), output: pipe[0])
        guard text.hasPrefix(prefix) else {
            simulator.stop()
            return nil
        }
        return simulator
    }

    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(output)
    }
}

/// The peer (issue 51): the official Python SDK (the version CI installs, pubnub==10.8.0) doing the
/// work of two `pnreplicate` commands without a store, on one simulator both sides share, each side
/// a whole process as a user runs it, which side goes first alternating from run to run:
///
/// - catch-up: `pnreplicate sync` into a fresh store, as the member of every channel of a seeded
///   keyset (N channels x 200 messages; the reaction on every 5th is read by neither side; no
///   other users), against `Benchmarks/peer/sdk_peer.py catchup` paging each channel's history
///   with `fetch_messages`, 100 a page, one channel after another;
/// - publishes: `pnreplicate send --count` then `sync` into a fresh store, against
///   `sdk_peer.py publish`, `publish().sync()` one by one; each side on a channel of its own.
///
/// The ratio is the SDK's time over pnreplicate's (medians of `runs`): ≥ 1 means pnreplicate is at
/// least as fast. Skipped, with a line saying why, when `python3` cannot import pubnub.
func peer() {
    let channels = quick ? 10 : 100
    let perChannel = 200
    let publishes = quick ? 200 : 2000
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("peer/sdk_peer.py").path
    print("")
    let probe = run(path: "/usr/bin/env", ["python3", "-c", "import importlib.metadata, pubnub; print(importlib.metadata.version('pubnub'))"])
    guard probe.status == 0 else {
        print("Peer (the official Python SDK): skipped, `python3 -c \"import pubnub\"` fails (CI installs it: python3 -m pip install pubnub==10.8.0).")
        return
    }
    guard FileManager.default.fileExists(atPath: script) else {
        print("Peer (the official Python SDK): skipped, no \(script) (it is read from the checkout the benchmark was built from).")
        return
    }
    let version = probe.output.trimmingCharacters(in: .whitespacesAndNewlines)
    // The keys, user and origin are given on each command line (the environment's PUBNUB_* are for
    // PubNub); no cipher key, token or DataSync, as the SDK side uses none.
    for name in ["PUBNUB_CIPHER_KEY", "PUBNUB_AUTH_TOKEN", "PUBNUB_AUTH_KEY", "PNREPLICATE_OBJECTS"] { unsetenv(name) }
    FileHandle.standardError.write(Data("pnreplicate simulator serve --keyset-channels \(channels) --keyset-messages \(perChannel)\n".utf8))
    guard let simulator = ServedSimulator.start([
        "--publish-key", "demo", "--subscribe-key", "demo", "--keyset-channels", "\(channels)", "--keyset-messages", "\(perChannel)",
        "--keyset-users", "0", "--keyset-member", "me",
    ]) else { fatalError("pnreplicate simulator serve did not start") }
    func fail(_ what: String, _ output: String) -> Never {
        simulator.stop()
        FileHandle.standardError.write(Data("pnreplicate-bench: \(what) failed:\n\(output.suffix(2000))\n".utf8))
        exit(1)
    }
    let connection = ["--origin", "http://\(simulator.origin)", "--publish-key", "demo", "--subscribe-key", "demo"]
    let python = ["python3", script, "--origin", simulator.origin, "--pub-key", "demo", "--sub-key", "demo"]
    var sdkCatchUp: [Double] = [], sdkCatchUpWork: [Double] = [], pnCatchUp: [Double] = []
    var sdkPublish: [Double] = [], sdkPublishWork: [Double] = [], pnSend: [Double] = [], pnPush: [Double] = [], pnPublish: [Double] = []
    for index in 1...runs {
        FileHandle.standardError.write(Data(
            "peer: catch-up \(channels) x \(perChannel), \(publishes) publishes, SDK and pnreplicate (run \(index) of \(runs))\n".utf8))
        let catchUpStore = scratch.appendingPathComponent("peer-catch-up-\(index).sqlite").path
        let publishStore = scratch.appendingPathComponent("peer-publish-\(index).sqlite").path
        func pnreplicateCatchUp() {
            let sync = run("pnreplicate", ["sync", "--store", catchUpStore, "--user-id", "me", "--timeout", "600"] + connection)
            let caughtUp = sync.output.split(separator: "\n")
                .filter { $0.hasPrefix("channel ch-") && $0.hasSuffix(", \(perChannel) new messages") }.count
            guard sync.status == 0, caughtUp == channels else { fail("pnreplicate sync (catch-up)", sync.output) }
            pnCatchUp.append(sync.seconds)
        }
        func sdkCatchUpRun() {
            let sdk = run(path: "/usr/bin/env", python + ["catchup", "--channels", "\(channels)", "--per-channel", "\(perChannel)"])
            let values = figures(sdk.output)
            guard sdk.status == 0, values["peer.catchup.messages"] == Double(channels * perChannel) else { fail("sdk_peer.py catchup", sdk.output) }
            sdkCatchUp.append(sdk.seconds)
            sdkCatchUpWork.append(values["peer.catchup.seconds"] ?? .nan)
        }
        func pnreplicatePublishes() {
            let user = ["--user-id", "peer-pnreplicate"]
            let send = run("pnreplicate", ["send", "--store", publishStore, "--channel", "peer-pnreplicate-\(index)", "--text", "bench",
                                           "--count", "\(publishes)"] + user + connection)
            guard send.status == 0 else { fail("pnreplicate send --count", send.output) }
            let sync = run("pnreplicate", ["sync", "--store", publishStore, "--timeout", "600"] + user + connection)
            let sent = sync.output.split(separator: "\n").first { $0.hasPrefix("sent ") }
                .flatMap { $0.split(separator: " ").last }.flatMap { Int($0) }
            guard sync.status == 0, sent == publishes else { fail("pnreplicate sync (publishes)", sync.output) }
            pnSend.append(send.seconds)
            pnPush.append(sync.seconds)
            pnPublish.append(send.seconds + sync.seconds)
        }
        func sdkPublishes() {
            let sdk = run(path: "/usr/bin/env", python + ["publish", "--channel", "peer-sdk-\(index)", "--text", "bench", "--count", "\(publishes)"])
            let values = figures(sdk.output)
            guard sdk.status == 0, values["peer.publish.messages"] == Double(publishes) else { fail("sdk_peer.py publish", sdk.output) }
            sdkPublish.append(sdk.seconds)
            sdkPublishWork.append(values["peer.publish.seconds"] ?? .nan)
        }
        if index % 2 == 1 {
            pnreplicateCatchUp(); sdkCatchUpRun(); pnreplicatePublishes(); sdkPublishes()
        } else {
            sdkCatchUpRun(); pnreplicateCatchUp(); sdkPublishes(); pnreplicatePublishes()
        }
        for store in [catchUpStore, publishStore] {
            for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        }
    }
    simulator.stop()

    func seconds(_ value: Double) -> String { String(format: "%.2f s", value) }
    func share(_ sdk: [Double], _ pnreplicate: [Double]) -> String { String(format: "%.2f", median(sdk) / median(pnreplicate)) }
    let publishLabel = publishes >= 1000 ? "\(publishes / 1000),\(String(format: "%03d", publishes % 1000))" : "\(publishes)"
    print("Peer: the official Python SDK (pubnub \(version)) doing the same work without a store, on the same simulator, each side whole processes, median of \(runs) run\(runs == 1 ? "" : "s") (ratio = SDK time ÷ pnreplicate time):")
    print("")
    printTable([
        ["work", "SDK (work only, in the script)", "pnreplicate", "ratio", "goal"],
        ["catch-up \(channels) ch × \(perChannel) msgs", "\(seconds(median(sdkCatchUp))) (\(seconds(median(sdkCatchUpWork))))",
         "\(seconds(median(pnCatchUp))) (sync into a fresh store)", share(sdkCatchUp, pnCatchUp), "≥ 1"],
        ["\(publishLabel) publishes, one by one", "\(seconds(median(sdkPublish))) (\(seconds(median(sdkPublishWork))))",
         "\(seconds(median(pnPublish))) (send \(seconds(median(pnSend))) + sync \(seconds(median(pnPush))))", share(sdkPublish, pnPublish), "≥ 1"],
    ])
    emit([
        ("peer.catchup.sdk-seconds", median(sdkCatchUp)), ("peer.catchup.sdk-work-seconds", median(sdkCatchUpWork)),
        ("peer.catchup.pnreplicate-seconds", median(pnCatchUp)), ("peer.catchup.ratio", median(sdkCatchUp) / median(pnCatchUp)),
        ("peer.publish.sdk-seconds", median(sdkPublish)), ("peer.publish.sdk-work-seconds", median(sdkPublishWork)),
        ("peer.publish.pnreplicate-seconds", median(pnPublish)), ("peer.publish.send-seconds", median(pnSend)),
        ("peer.publish.sync-seconds", median(pnPush)), ("peer.publish.ratio", median(sdkPublish) / median(pnPublish)),
    ])
}

var host = utsname()
uname(&host)
let machine = withUnsafeBytes(of: &host.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }

/// `--compare BASE`: the median of every figure of `runs` rounds of BASE's `pnreplicate-bench` and
/// this folder's, alternating which goes first, ratios first; exits 64 when BASE lacks a binary.
func compare(_ base: String) -> Never {
    func leave(_ status: Int32, _ text: String? = nil) -> Never {
        if let text { FileHandle.standardError.write(Data("pnreplicate-bench: --compare: \(text)\n".utf8)) }
        try? FileManager.default.removeItem(at: scratch)
        exit(status)
    }
    func refuse(_ text: String) -> Never { leave(64, text) }
    guard !base.isEmpty, !base.hasPrefix("--") else { refuse("usage: pnreplicate-bench --compare BASE [--runs N] [--quick] [--peer-only]") }
    let baseFolder = URL(fileURLWithPath: base).resolvingSymlinksInPath()
    for binary in ["pnreplicate-bench"] + expected
    where !FileManager.default.isExecutableFile(atPath: baseFolder.appendingPathComponent(binary).path) {
        refuse("no \(binary) in \(baseFolder.path): BASE is a folder holding another build's binaries, \((["pnreplicate-bench"] + expected).joined(separator: ", "))")
    }
    // The flags given, less the ones it sets itself.
    var passed: [String] = [], index = 0
    while index < arguments.count {
        let flag = arguments[index]
        index += ["--compare", "--runs"].contains(flag) ? 2 : 1
        if !["--compare", "--runs", "--machine"].contains(flag) { passed.append(flag) }
    }
    let sides = [baseFolder, binaries]
    let args = ["--runs", "1", "--machine"] + passed
    var values: [[String: [Double]]] = [[:], [:]]
    var keys: [String] = []
    for round in 1...runs {
        for side in round % 2 == 1 ? [0, 1] : [1, 0] {
            let command = sides[side].appendingPathComponent("pnreplicate-bench").path
            FileHandle.standardError.write(Data("compare: \(command) \(args.joined(separator: " ")) (round \(round) of \(runs))\n".utf8))
            let result = run(path: command, args, showErrors: true)
            let lines = result.output.split(separator: "\n").filter { $0.hasPrefix("bench: ") }
            guard result.status == 0, !lines.isEmpty else {
                let what = result.status != 0 ? "failed"
                    : "printed no `bench:` lines (built before `--machine`? a copy of this one there times the binaries beside it)"
                leave(1, "\(command) \(what):\n\(result.output.suffix(2000))")
            }
            for line in lines {
                let key = String(line.dropFirst(7).prefix { $0 != " " })
                if !keys.contains(key) { keys.append(key) }
            }
            for (key, value) in figures(result.output) { values[side][key, default: []].append(value) }
        }
    }
    func number(_ value: Double) -> String {
        value.rounded() == value || abs(value) >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    }
    func cell(_ all: [Double]?) -> String {
        guard let all, let low = all.min(), let high = all.max() else { return "-" }
        return low == high ? number(low) : "\(number(median(all))) (\(number(low))–\(number(high)))"
    }
    func change(_ key: String) -> String {
        let (old, new) = (median(values[0][key] ?? []), median(values[1][key] ?? []))
        guard !old.isNaN, !new.isNaN, old != 0 || new == 0 else { return "-" }
        return old == new ? "0 %" : String(format: "%+.1f %%", (new / old - 1) * 100)
    }
    let ratios = keys.filter { $0.hasSuffix(".ratio") }
    // Counts that never vary (requests per sync) are left out of the table when they did not change.
    let same = keys.filter { key in Set(values[0][key, default: []] + values[1][key, default: []]).count == 1
        && values[0][key] != nil && values[1][key] != nil }
    print("pnreplicate-bench --compare \(ISO8601DateFormatter().string(from: Date())), \(ProcessInfo.processInfo.activeProcessorCount) cores \(machine), "
        + "median (min–max) of \(runs) round\(runs == 1 ? "" : "s"), each `pnreplicate-bench \(args.joined(separator: " "))` of both builds, alternating which goes first")
    print("BASE: \(baseFolder.path)")
    print("this build: \(binaries.path)")
    print("")
    print("The ratios (bold, first) are what count: pnreplicate against its raw limit, or the SDK's time over pnreplicate's, both measured in the same run; higher is better. Absolute rates and times drift with the machine's load.")
    print("")
    printTable([["figure", "BASE", "this build", "change"]] + (ratios + keys.filter { !ratios.contains($0) && !same.contains($0) }).map { key in
        [ratios.contains(key) ? "**\(key)**" : key, cell(values[0][key]), cell(values[1][key]), change(key)]
    })
    if !same.isEmpty {
        let groups = Set(same.map { $0.split(separator: ".").prefix(2).joined(separator: ".") }).sorted()
        print("")
        print("Left out, the same in every round of both builds: \(same.count) figure\(same.count == 1 ? "" : "s") (\(groups.joined(separator: ", ")))")
    }
    leave(0)
}

if let flag = arguments.firstIndex(of: "--compare") {
    compare(arguments.count > flag + 1 ? arguments[flag + 1] : "")
}

if peerOnly {
    peer()
    try? FileManager.default.removeItem(at: scratch)
    exit(0)
}

let ingestCount = quick ? 10_000 : 100_000
let opCount = quick ? 10_000 : 100_000
let reconciler = collect("ReconcilerBenchmarks", ["\(ingestCount)"])
let outbox = collect("OutboxBenchmarks", [quick ? "500" : "2000"])
let live = collect("LiveBenchmarks", [quick ? "1000" : "10000"])

// The CLI on a store of `opCount` pending publishes: the bulk send makes it, the dry run reads it.
var sendSeconds: [Double] = [], sendRSS: [Double] = []
var dryFirst: [Double] = [], drySeconds: [Double] = [], dryRSS: [Double] = []
var jsonSeconds: [Double] = [], jsonRSS: [Double] = []
for index in 1...runs {
    FileHandle.standardError.write(Data("pnreplicate send --count \(opCount), --dry-run (run \(index) of \(runs))\n".utf8))
    let store = scratch.appendingPathComponent("cli-\(index).sqlite").path
    let send = run("pnreplicate", ["send", "--store", store, "--channel", "bulk", "--text", "bench", "--count", "\(opCount)"])
    guard send.status == 0 else { fatalError("pnreplicate send failed:\n\(send.output)") }
    sendSeconds.append(send.seconds)
    sendRSS.append(send.peakRSSMegabytes)
    let dry = run("pnreplicate", ["--dry-run", "--store", store])
    guard dry.status == 0, dry.output.contains("\(opCount). ") else {
        fatalError("pnreplicate --dry-run failed:\n\(dry.output.prefix(500))")
    }
    dryFirst.append(dry.firstLine ?? .nan)
    drySeconds.append(dry.seconds)
    dryRSS.append(dry.peakRSSMegabytes)
    let json = run("pnreplicate", ["--dry-run", "--json", "--store", store])
    guard json.status == 0 else { fatalError("pnreplicate --dry-run --json failed") }
    jsonSeconds.append(json.seconds)
    jsonRSS.append(json.peakRSSMegabytes)
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
}
FileHandle.standardError.write(Data("ReconcilerBenchmarks \(quick ? 100_000 : 1_000_000) --rss\n".utf8))
let rss = run("ReconcilerBenchmarks", ["\(quick ? 100_000 : 1_000_000)", "--rss"])

func m(_ values: [String: [Double]], _ key: String) -> Double { median(values[key] ?? []) }
func rate(_ value: Double) -> String { value.isNaN ? "-" : String(format: "%.0f/s", value) }
func ratio(_ a: Double, _ b: Double) -> String { a.isNaN || b.isNaN ? "-" : String(format: "%.2f", a / b) }

let date = ISO8601DateFormatter().string(from: Date())
let cores = ProcessInfo.processInfo.activeProcessorCount
print("pnreplicate-bench \(date), \(cores) cores \(machine), median of \(runs) run\(runs == 1 ? "" : "s")"
    + (quick ? " (quick: small inputs)" : ""))
print("")
let rows: [[String]] = [
    ["path", "pnreplicate", "raw limit, same run", "ratio", "goal"],
    ["history ingest (catchUp, 100/page)", rate(m(reconciler, "ingest")), rate(m(reconciler, "ingest-raw")) + " (prepared INSERT, 1 txn)",
     ratio(m(reconciler, "ingest"), m(reconciler, "ingest-raw")), "≥ 0.6"],
    ["durable enqueue (message + op, 1 commit each)", rate(m(outbox, "enqueue")), rate(m(outbox, "enqueue-raw")) + " (1-row txns)",
     ratio(m(outbox, "enqueue"), m(outbox, "enqueue-raw")), "≥ 0.8"],
    ["drain, 1 channel", rate(m(outbox, "drain-1")), rate(m(outbox, "publish-1")) + " (sequential publishes)",
     ratio(m(outbox, "drain-1"), m(outbox, "publish-1")), "≥ 0.7"],
    ["drain, 8 channels", rate(m(outbox, "drain-8")), rate(m(outbox, "publish-8")) + " (8 concurrent publishers)",
     ratio(m(outbox, "drain-8"), m(outbox, "publish-8")), "≥ 0.7"],
    ["live sync: publish → observed, p50 / p99", String(format: "%.2f / %.2f ms", m(live, "live-p50"), m(live, "live-p99")),
     "-", "-", "p99 < 50 ms"],
    ["live ingest vs history ingest", rate(m(live, "live-ingest")), rate(m(live, "history-ingest")) + " (catchUp, same messages)",
     ratio(m(live, "live-ingest"), m(live, "history-ingest")), "≥ 1"],
    ["pnreplicate send --count \(opCount)", String(format: "%.2f s, %.0f MB", median(sendSeconds), median(sendRSS)), "-", "-", "< 5 s"],
    ["pnreplicate --dry-run, \(opCount) ops",
     String(format: "%.2f s (first line %.0f ms), %.0f MB", median(drySeconds), median(dryFirst) * 1000, median(dryRSS)),
     "-", "-", "< 1 s, < 100 ms, < 100 MB"],
    ["pnreplicate --dry-run --json, \(opCount) ops", String(format: "%.2f s, %.0f MB", median(jsonSeconds), median(jsonRSS)),
     "-", "-", "-"],
    ["reconcile \(quick ? "100k" : "1M") messages, peak RSS", String(format: "%.0f MB", rss.peakRSSMegabytes), "-", "-", "< 150 MB"],
]
printTable(rows)
emit([(reconciler, "ingest", "ingest-raw"), (outbox, "enqueue", "enqueue-raw"), (outbox, "drain-1", "publish-1"),
      (outbox, "drain-8", "publish-8"), (live, "live-ingest", "history-ingest")].flatMap { values, key, raw in
    [(key, m(values, key)), (raw, m(values, raw)), ("\(key).ratio", m(values, key) / m(values, raw))]
} + [
    ("live-p50", m(live, "live-p50")), ("live-p99", m(live, "live-p99")),
    ("cli.send-seconds", median(sendSeconds)), ("cli.send-rss-mb", median(sendRSS)),
    ("cli.dry-run-seconds", median(drySeconds)), ("cli.dry-run-first-line-ms", median(dryFirst) * 1000), ("cli.dry-run-rss-mb", median(dryRSS)),
    ("cli.dry-run-json-seconds", median(jsonSeconds)), ("cli.dry-run-json-rss-mb", median(jsonRSS)),
    ("reconcile-rss-mb", rss.peakRSSMegabytes),
])

// Requests per sync (docs/performance.md, "Requests per sync"): counts, not times, so one run.
let requestSizes = quick ? ["20", "200"] : ["20", "200", "2000"]
FileHandle.standardError.write(Data("RequestBenchmarks \(requestSizes.joined(separator: " "))\n".utf8))
let requests = figures(run("RequestBenchmarks", requestSizes).output)
print("")
print("Requests per sync (ChatKeyset: N channels x 50 messages, a reaction on every 5th, 500 users), no channel hot / every channel hot:")
print("")
let cases = ["idle", "reconnect", "changed-3", "hot-refresh", "first-sync"]
let requestRows = [["case"] + requestSizes.map { "\($0) channels" }] + cases.map { name in
    [name] + requestSizes.map { size in
        func value(_ mode: String) -> String { requests["requests.\(mode).\(size).\(name)"].map { String(Int($0)) } ?? "-" }
        return "\(value("cold")) / \(value("all-hot"))"
    }
}
printTable(requestRows)
emit(requests.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
peer()

// pnreplicate-bench: every performance figure of docs/performance.md in one table.
//
//     swift build -c release --product pnreplicate
//     swift build -c release --package-path Benchmarks --scratch-path .build
//     .build/release/pnreplicate-bench [--runs 5] [--quick]
//
// Runs the benchmark executables built beside it (ReconcilerBenchmarks, OutboxBenchmarks,
// LiveBenchmarks) and the `pnreplicate` command itself, each `--runs` times (default 5), reads the
// `bench: <key> <value>` lines they print, and prints the median of each figure next to the raw
// limit measured in the same run, with their ratio. Each run is a fresh process, so one run's
// caches and heap do not flatter the next. `--quick` runs everything once on smaller inputs, to
// check the command works. Run by hand, in release; never in CI.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")
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
for binary in ["ReconcilerBenchmarks", "OutboxBenchmarks", "LiveBenchmarks", "RequestBenchmarks", "pnreplicate"]
where !FileManager.default.isExecutableFile(atPath: binaries.appendingPathComponent(binary).path) {
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

/// Runs `binary` with `args`, stdout captured (stderr to /dev/null), and measures it.
func run(_ binary: String, _ args: [String]) -> ChildRun {
    let target = binaries.appendingPathComponent(binary).path
    let rssFile = scratch.appendingPathComponent("rss-\(UUID().uuidString)").path
    let path = timeTool ?? target
    let args = timeTool == nil ? args : ["-f", "%M", "-o", rssFile, target] + args
    var pipe: [Int32] = [0, 0]
    guard Glibc.pipe(&pipe) == 0 else { fatalError("pipe failed") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
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

var host = utsname()
uname(&host)
let machine = withUnsafeBytes(of: &host.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
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
let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
for (index, row) in rows.enumerated() {
    let cells = row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
    print("| " + cells.joined(separator: " | ") + " |")
    if index == 0 { print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|") }
}

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
let requestWidths = (0...requestSizes.count).map { column in requestRows.map { $0[column].count }.max() ?? 0 }
for (index, row) in requestRows.enumerated() {
    let cells = row.enumerated().map { $0.element.padding(toLength: requestWidths[$0.offset], withPad: " ", startingAt: 0) }
    print("| " + cells.joined(separator: " | ") + " |")
    if index == 0 { print("|" + requestWidths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|") }
}

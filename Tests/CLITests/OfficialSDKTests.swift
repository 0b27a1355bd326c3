import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The official PubNub Python SDK against `pnreplicate simulator serve`: the script
/// `Tests/Compat/python_sdk_check.py` subscribes (event-engine long poll), publishes, adds a
/// message action, sets App Context user, channel and membership, sends a signal and reads history
/// and actions back, checking every event the SDK's listener receives (docs/simulator.md, "Official
/// SDKs").
enum OfficialSDK {
    /// `python3` on the PATH, as an absolute path (`posix_spawn` does not search the PATH).
    static let python: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("python3") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Whether `python3 -c "import pubnub"` succeeds.
    static let isInstalled: Bool = {
        guard let python, let run = try? BoundedRun.runBlocking(["-c", "import pubnub"], executable: python, limit: .seconds(30))
        else { return false }
        return !run.timedOut && run.reason == .exit && run.status == 0
    }()

    /// CI must run the check (`.ci/run` installs the SDK); elsewhere a missing SDK skips it.
    static let isRequired = ProcessInfo.processInfo.environment["CI"] != nil

    /// The script, found from this file's path (the package's root is two levels up).
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Compat/python_sdk_check.py")
}

extension OfficialSDK {
    /// Runs `script` against a fresh `simulator serve` (no faults), bounded by `limit` (the
    /// scripts bound themselves; this only guards against one that hangs), then stops the
    /// simulator with SIGTERM: its held long polls must be answered at once, not after the 280 s
    /// hold. Records an issue when the script fails or the simulator does not stop in 20 s.
    static func runAgainstSimulator(_ script: URL, limit: Duration) async throws -> BoundedRun {
        try #require(
            isInstalled,
            "CI is set but `python3 -c \"import pubnub\"` fails: install the SDK (.ci/run does: python3 -m pip install pubnub==10.8.0)")
        let python = try #require(Self.python)
        let simulator = try await SimulatorProcess(faults: "none", seed: 0)
        var stopped = false
        defer { if !stopped { simulator.process.signal(SIGKILL) } }
        // The waits run off Swift's cooperative pool, which other tests need meanwhile.
        let port = simulator.port, path = script.path
        let run = try await offPool { try BoundedRun.runBlocking([path, "127.0.0.1:\(port)"], executable: python, limit: limit) }
        #expect(
            !run.timedOut && run.reason == .exit && run.status == 0,
            "\(script.lastPathComponent) ended with \(run.reason) \(run.status)\(run.timedOut ? " (killed after \(limit))" : "") in \(run.seconds) s:\n\(run.stdout)\n\(run.stderr)")
        simulator.process.terminate()
        let process = simulator.process
        let ending = try await offPool { process.wait(timeout: .seconds(20)) }
        stopped = ending != nil
        #expect(ending != nil, "simulator serve did not stop within 20 s of SIGTERM")
        return run
    }
}

@Suite("the official PubNub Python SDK against the simulator")
struct OfficialSDKTests {
    // Skipped when the `pubnub` Python package is not installed (`python3 -m pip install pubnub`),
    // except under CI (the CI variable set), where a missing SDK fails the test instead.
    @Test(
        "python_sdk_check.py: subscribe events, publish, actions, App Context, signal, history",
        .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"))
    func pythonSDK() async throws {
        // The subscriber's last long poll is still held when the script ends: the SIGTERM that
        // follows must answer it.
        _ = try await OfficialSDK.runAgainstSimulator(OfficialSDK.script, limit: .seconds(60))
    }
}

/// The official Python SDK's File Sharing against `pnreplicate simulator serve`: the script
/// `Tests/Compat/python_files_check.py` sends, lists, locates, downloads and deletes files and
/// reads their file messages back, without a cipher key, with the legacy crypto module and with
/// the ACRH one (docs/simulator.md, "Files").
@Suite("the official PubNub Python SDK's File Sharing against the simulator")
struct OfficialSDKFileTests {
    /// The script, next to `python_sdk_check.py`.
    static let script = OfficialSDK.script.deletingLastPathComponent().appendingPathComponent("python_files_check.py")

    @Test(
        "python_files_check.py: send_file, list_files, get_file_url, download_file, delete_file, fetch_messages; plain, legacy, ACRH",
        .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"))
    func pythonSDKFiles() async throws {
        let run = try await OfficialSDK.runAgainstSimulator(Self.script, limit: .seconds(90))
        #expect(run.stdout.contains("ok   [acrh] download_file: bytes identical"), "\(run.stdout)")
    }
}

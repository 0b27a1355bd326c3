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
        guard let python, let run = try? BoundedRun.run(["-c", "import pubnub"], executable: python, limit: .seconds(30))
        else { return false }
        return !run.timedOut && run.reason == .exit && run.status == 0
    }()

    /// CI must run the check (`.ci/run` installs the SDK); elsewhere a missing SDK skips it.
    static let isRequired = ProcessInfo.processInfo.environment["CI"] != nil

    /// The script, found from this file's path (the package's root is two levels up).
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Compat/python_sdk_check.py")
}

@Suite("the official PubNub Python SDK against the simulator")
struct OfficialSDKTests {
    // Skipped when the `pubnub` Python package is not installed (`python3 -m pip install pubnub`),
    // except under CI (the CI variable set), where a missing SDK fails the test instead.
    @Test(
        "python_sdk_check.py: subscribe events, publish, actions, App Context, signal, history",
        .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"))
    func pythonSDK() async throws {
        try #require(
            OfficialSDK.isInstalled,
            "CI is set but `python3 -c \"import pubnub\"` fails: install the SDK (.ci/run does: python3 -m pip install pubnub==10.8.0)")
        let python = try #require(OfficialSDK.python)
        let simulator = try SimulatorProcess(faults: "none", seed: 0)
        var stopped = false
        defer { if !stopped { simulator.process.signal(SIGKILL); simulator.process.wait() } }
        // The script bounds itself at 30 s; the limit here only guards against a script that hangs.
        // The waits run off Swift's cooperative pool, which other tests need meanwhile.
        let port = simulator.port
        let run = try await offPool {
            try BoundedRun.run([OfficialSDK.script.path, "127.0.0.1:\(port)"], executable: python, limit: .seconds(60))
        }
        #expect(
            !run.timedOut && run.reason == .exit && run.status == 0,
            "python_sdk_check.py ended with \(run.reason) \(run.status)\(run.timedOut ? " (killed after 60 s)" : "") in \(run.seconds) s:\n\(run.stdout)\n\(run.stderr)")
        // The subscriber's last long poll is still held by the server (it does not notice the
        // closed connection): SIGTERM must answer it and stop at once, not wait out the 280 s hold.
        simulator.process.terminate()
        let process = simulator.process
        let ending = try await offPool { process.wait(timeout: .seconds(20)) }
        stopped = ending != nil
        #expect(ending != nil, "simulator serve did not stop within 20 s of SIGTERM with a long poll held")
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
        try #require(
            OfficialSDK.isInstalled,
            "CI is set but `python3 -c \"import pubnub\"` fails: install the SDK (.ci/run does: python3 -m pip install pubnub==10.8.0)")
        let python = try #require(OfficialSDK.python)
        let simulator = try SimulatorProcess(faults: "none", seed: 0)
        var stopped = false
        defer { if !stopped { simulator.process.signal(SIGKILL); simulator.process.wait() } }
        // The script bounds itself at 60 s; the limit here only guards against a script that hangs.
        let port = simulator.port
        let script = Self.script.path
        let run = try await offPool {
            try BoundedRun.run([script, "127.0.0.1:\(port)"], executable: python, limit: .seconds(90))
        }
        #expect(
            !run.timedOut && run.reason == .exit && run.status == 0,
            "python_files_check.py ended with \(run.reason) \(run.status)\(run.timedOut ? " (killed after 90 s)" : "") in \(run.seconds) s:\n\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("ok   [acrh] download_file: bytes identical"), "\(run.stdout)")
        simulator.process.terminate()
        let process = simulator.process
        let ending = try await offPool { process.wait(timeout: .seconds(20)) }
        stopped = ending != nil
        #expect(ending != nil, "simulator serve did not stop within 20 s of SIGTERM")
    }
}

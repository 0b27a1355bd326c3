import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The official Python SDK's Access Manager v3 against `pnreplicate simulator serve --secret-key`:
/// the script `Tests/Compat/python_access_check.py` grants a token with the secret key, parses it,
/// uses it from a client without the key (allowed, refused, another uuid), revokes it, moves the
/// simulator's clock past a fresh token's TTL over `POST /simulator/clock`, and checks the 400s
/// and 403s (docs/simulator.md, "Access Manager").
@Suite("the official PubNub Python SDK's Access Manager against the simulator")
struct OfficialSDKAccessTests {
    /// The script, next to `python_sdk_check.py`.
    static let script = OfficialSDK.script.deletingLastPathComponent().appendingPathComponent("python_access_check.py")
    static let secretKey = "sec-c-simulator-test"

    @Test(
        "python_access_check.py: grant_token, parse_token, set_token, refusals, revoke_token, expiry on the simulator's clock",
        .enabled(if: OfficialSDK.isInstalled || OfficialSDK.isRequired, "the pubnub Python package is not installed"))
    func pythonSDKAccess() async throws {
        try #require(
            OfficialSDK.isInstalled,
            "CI is set but `python3 -c \"import pubnub\"` fails: install the SDK (.ci/run does: python3 -m pip install pubnub==10.8.0)")
        let python = try #require(OfficialSDK.python)
        let simulator = try ChildProcess(
            CLI.binary.path, ["simulator", "serve", "--port", "0", "--secret-key", Self.secretKey], stdout: .pipe, stderr: .pipe)
        defer { simulator.signal(SIGKILL) }
        let firstLine = String(try await offPool { simulator.stdout(when: { $0.contains("\n") }, within: .seconds(30)) }.prefix { $0 != "\n" })
        let port = try #require(firstLine.split(separator: ":").last.flatMap { Int($0) }, "simulator said: \(firstLine)")
        let path = Self.script.path
        let run = try await offPool {
            try BoundedRun.runBlocking([path, "127.0.0.1:\(port)", "--secret-key", Self.secretKey], executable: python, limit: .seconds(90))
        }
        #expect(
            !run.timedOut && run.reason == .exit && run.status == 0,
            "python_access_check.py ended with \(run.reason) \(run.status) in \(run.seconds) s:\n\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("ok   past the TTL: refused, Token is expired."), "\(run.stdout)")

        // A token from the script's --grant mode works the same way (what the CLI's checks use).
        let granted = try await offPool {
            try BoundedRun.runBlocking(
                [path, "127.0.0.1:\(port)", "--secret-key", Self.secretKey, "--grant", "a,b", "--authorized-uuid", "me", "--ttl", "5"],
                executable: python, limit: .seconds(60))
        }
        let token = granted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(granted.status == 0 && token.count % 4 == 0 && !token.isEmpty, "\(granted.stdout)\(granted.stderr)")

        simulator.terminate()
        let ended = try await offPool { simulator.wait(timeout: .seconds(20)) }
        #expect(ended != nil, "simulator serve did not stop within 20 s of SIGTERM")
        #expect(!simulator.stdout.contains(Self.secretKey) && !simulator.stderr.contains(Self.secretKey), "the secret key was printed")
        #expect(simulator.stderr.contains("access manager: on"), "\(simulator.stderr)")
    }
}

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a blocking wait (a child's output, a child's exit) on a thread of its own, so that it never
/// holds one of the few threads of Swift's cooperative pool while other tests need them.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

@Suite("presence, typing and listen --presence on the command line", .serialized)
struct PresenceCommandTests {
    @Test("listen --presence prints its own join and another user's typing; presence shows here-now next to the store; typing --stop",
          .timeLimit(.minutes(10)))
    func presenceAndTyping() async throws {
        let simulator = try await SimulatorProcess(faults: "none", seed: 1, arguments: ["--subscribe-hold", "1"])
        defer { simulator.stop() }
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "listener", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        let listen = try ChildProcess(
            CLI.binary.path, ["listen", "--store", store, "--verbose", "--presence", "--channel", "room"],
            environment: env, stdout: .pipe, stderr: .pipe)
        defer { listen.signal(SIGKILL) }
        let states = try await offPool { listen.stderr(when: { $0.contains("presence read: room (1 here)") }, within: .seconds(30)) }
        try #require(states.contains("presence read: room (1 here)"), "\(states)")
        let joined = try await offPool { listen.stdout(when: { $0.contains("presence-join listener") }, within: .seconds(30)) }
        #expect(joined.contains("room-pnpres "), "\(joined)")

        let typist = ["PUBNUB_USER_ID": "typist", "PUBNUB_ORIGIN": simulator.origin, "SWIFT_BACKTRACE": "enable=no"]
        let started = try await offPool { try CLI.runBlocking(["typing", "--store", CLI.temporaryStore(), "--channel", "room"], environment: typist) }
        #expect(started.status == 0 && started.stdout == "typing started on room\n", "\(started.stderr)")
        let typing = try await offPool { listen.stdout(when: { $0.contains("typing started delivered (from typist)") }, within: .seconds(30)) }
        #expect(typing.contains("room "), "\(typing)")
        let stopped = try await offPool { try CLI.runBlocking(["typing", "--channel", "room", "--stop", "--json"], environment: typist) }
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(try CLI.json(stopped.stdout)["typing"] as? String == "stopped")
        _ = try await offPool { listen.stdout(when: { $0.contains("typing stopped delivered (from typist)") }, within: .seconds(30)) }

        let presence = try await offPool { try CLI.runBlocking(["presence", "--store", store, "--channel", "room"], environment: typist) }
        #expect(presence.status == 0, "\(presence.stderr)")
        #expect(presence.stdout.hasPrefix("room: 1 here\n"), "\(presence.stdout)")
        let row = presence.stdout.split(separator: "\n").first { $0.hasPrefix("listener ") }
        #expect(row?.split(separator: " ", omittingEmptySubsequences: true) == ["listener", "here", "no", "member", "row"], "\(presence.stdout)")
        let json = try CLI.json(try await offPool { try CLI.runBlocking(["presence", "--store", store, "--channel", "room", "--json"], environment: typist) }.stdout)
        #expect(json["occupancy"] as? Int == 1)

        listen.signal(SIGINT)
        let ended = await listen.wait(until: .now + .seconds(30))
        #expect(ended == Termination(reason: .exit, status: 0), "\(listen.stderr)")
        // The stop sent a leave: nobody is here any more.
        let after = try await offPool { try CLI.runBlocking(["presence", "--store", store, "--channel", "room"], environment: typist) }
        #expect(after.stdout.hasPrefix("room: 0 here\n"), "\(after.stdout)")
    }

    @Test("typing refuses a bad channel and presence a missing store, before sending anything")
    func refusals() async throws {
        let bad = try await offPool { try CLI.runBlocking(["typing", "--channel", "a,b"]) }
        #expect(bad.status != 0 && bad.stderr.contains("--channel"), "\(bad.stderr)")
        let store = CLI.temporaryStore()
        let missing = try await offPool { try CLI.runBlocking(["presence", "--store", store, "--channel", "room"], environment: ["PUBNUB_ORIGIN": "127.0.0.1:9"]) }
        #expect(missing.status != 0 && !FileManager.default.fileExists(atPath: store), "\(missing.stderr)")
    }
}

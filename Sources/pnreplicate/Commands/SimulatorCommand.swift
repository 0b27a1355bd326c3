import ArgumentParser
import Foundation
import PubNubSimulator
import SimulatorHTTP

/// `pnreplicate simulator ...`.
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulator", abstract: "Run the embedded PubNub simulator.", subcommands: [Serve.self])

    /// `pnreplicate simulator serve`.
    struct Serve: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve the simulator on 127.0.0.1 until SIGINT or SIGTERM.",
            discussion: """
                The first line printed is `listening on http://127.0.0.1:PORT`.

                Misbehaving server (real time, for testing a client's deadlines): --drip writes \
                every response body one byte at a time; --publish-delay holds each publish back \
                before it is applied and answered; --history-ignores-start drops `start` and `end` \
                from history reads, so paging backwards returns the newest page forever. \
                --request-log records every request, one line each.

                Subscribe is served as PubNub does: an idle long poll is held --subscribe-hold \
                seconds (280 by default; 1 keeps a test's listeners moving, 0 answers at once), and \
                each connection's buffer keeps 100 events for 20 minutes.

                Access Manager: with --secret-key, every request needs a token granted by this \
                simulator (POST /v3/pam/SUB/grant, signed with the key, as the SDKs' grant_token \
                does) or the key's signature; without it everything is granted to everyone. Token \
                TTLs run on the simulator's clock, which `POST /simulator/clock?advance=SECONDS` \
                moves forward (`GET /simulator/clock` reads it): docs/simulator.md, "Access Manager".

                DataSync (/v1/datasync) is served beside App Context and, as on PubNub, needs \
                --secret-key. --keyset-objects datasync seeds the keyset's users, channels and \
                memberships there instead of App Context; --member-token-file writes a token for \
                --keyset-member granting what a chat member needs (every channel, user and DataSync \
                membership, 24 hours), for `pnreplicate --objects datasync --auth-token-file`: \
                docs/datasync.md, "Trying it". An app's entity and relationship classes are defined \
                through the Admin API (POST /v2/datasync/subkeys/SUB/entity-classes/NAME/versions/N, \
                Authorization: --admin-key, else the secret key): docs/simulator.md, "DataSync".
                """)

        @Option(help: "Port to bind (0 picks a free one).")
        var port = 0

        @Option(help: "Seed of the fault plan; the same seed and requests give the same faults.")
        var seed: UInt64 = 0

        @Option(
            help: """
                Fault profile: none, flaky, offline, hostile (transport faults), hostile-server (mangled answers: \
                docs/simulator.md), live (flaky, plus cut long polls, forgotten cursors and buffer overflows on subscribe).
                """)
        var faults = "none"

        @Option(help: "The publish key the simulator accepts.")
        var publishKey = "demo"

        @Option(help: "The subscribe key the simulator accepts.")
        var subscribeKey = "demo"

        @Option(help: ArgumentHelp(
            "Enforce Access Manager with this secret key: grants, revokes, signatures and tokens (never printed).",
            valueName: "key"))
        var secretKey: String?

        @Option(help: ArgumentHelp(
            "The key the Admin API's Authorization header must carry (class definitions; default: the secret key; never printed).",
            valueName: "key"))
        var adminKey: String?

        @Option(
            name: .customLong("drip"), help: ArgumentHelp(
                "Write every response body one byte at a time, this many bytes per second (0.001-1000000).",
                valueName: "bytes-per-second"))
        var dripRate: Double?

        @Option(
            help: ArgumentHelp(
                "Hold each publish back this many seconds (0-3600) before applying and answering it.",
                valueName: "seconds"))
        var publishDelay: Double?

        @Option(
            help: ArgumentHelp(
                "Hold an idle subscribe long poll this many seconds (0-3600) before its empty answer; 0 answers at once.",
                valueName: "seconds"))
        var subscribeHold: Double = 280

        @Flag(help: "History reads ignore `start` and `end`: paging backwards gets the newest page forever.")
        var historyIgnoresStart = false

        @Option(help: ArgumentHelp(
            "The longest request line answered, in bytes; longer ones get PubNub's 414 (default: PubNub's documented ~32 KiB; 0: no limit).",
            valueName: "bytes"))
        var maxRequestLine = PubNubServer.requestLineLimit

        @Option(help: ArgumentHelp("Append one line per request received (`METHOD /path?query`) to this file.", valueName: "path"))
        var requestLog: String?

        @Option(help: ArgumentHelp(
            "Seed a chat keyset of this many channels before serving (0-10000): each with --keyset-messages messages and a reaction on every 5th, --keyset-users users, and --keyset-member a member of every channel.",
            valueName: "count"))
        var keysetChannels = 0

        @Option(help: ArgumentHelp("Messages per seeded channel (0-1000).", valueName: "count"))
        var keysetMessages = 50

        @Option(help: ArgumentHelp("Users of the seeded keyset (0-100000).", valueName: "count"))
        var keysetUsers = 500

        @Option(help: ArgumentHelp("The user who is a member of every seeded channel.", valueName: "user-id"))
        var keysetMember = "me"

        @Option(help: ArgumentHelp(
            "Where the seeded keyset's users, channels and memberships live: app-context or datasync (needs --secret-key).",
            valueName: "backend"))
        var keysetObjects = "app-context"

        @Option(help: ArgumentHelp(
            "How the seeded channels' histories lie in time: interleaved (a message of each channel in turn) or one-after-another.",
            valueName: "layout"))
        var keysetHistory = "interleaved"

        @Option(help: ArgumentHelp(
            "Write a 24-hour token for --keyset-member (every channel, user and DataSync membership) to this file (needs --secret-key).",
            valueName: "path"))
        var memberTokenFile: String?

        @Option(help: ArgumentHelp(
            "Define a DataSync class, NAME[:VERSION]=EXTENDS:TTL-SECONDS (repeatable): a subclass of User, Channel or Membership with its own time to live, as PubNub's Admin API defines one (e.g. ChatUser:1=User:31536000).",
            valueName: "class"))
        var datasyncClass: [String] = []

        @Option(help: ArgumentHelp(
            "Turn off the e:5 events of this DataSync class (repeatable), as a keyset without an event rule for it does (e.g. User).",
            valueName: "class"))
        var datasyncEventsOff: [String] = []

        /// The classes of `--datasync-class`, or the usage error of the first that cannot be read.
        func dataSyncClasses() throws -> [DataSyncClass] {
            try datasyncClass.map { text in
                let usage = ValidationError("--datasync-class \(text): give NAME[:VERSION]=EXTENDS:TTL-SECONDS, e.g. ChatUser:1=User:31536000")
                let sides = text.split(separator: "=", omittingEmptySubsequences: false)
                guard sides.count == 2 else { throw usage }
                let head = sides[0].split(separator: ":", omittingEmptySubsequences: false)
                let tail = sides[1].split(separator: ":", omittingEmptySubsequences: false)
                guard (1...2).contains(head.count), let name = head.first.map(String.init), !name.isEmpty,
                      name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }),
                      let version = head.count == 2 ? Int(head[1]) : 1, version > 0,
                      tail.count == 2, ["User", "Channel", "Membership"].contains(String(tail[0])),
                      let ttl = Int(tail[1]), (1...315_569_260).contains(ttl)
                else { throw usage }
                let extends = String(tail[0])
                return DataSyncClass(
                    name: name, version: version, kind: extends == "Membership" ? .relationship : .entity,
                    extends: extends, ttlSeconds: ttl,
                    properties: extends == "Membership" ? [] : DataSyncClass.builtInProperties)
            }
        }

        func validate() throws {
            guard maxRequestLine >= 0 else { throw ValidationError("--max-request-line must be 0 (no limit) or a number of bytes") }
            let defined = try dataSyncClasses().map(\.name)
            for name in datasyncEventsOff where !(["User", "Channel", "Membership"] + defined).contains(name) {
                throw ValidationError("--datasync-events-off \(name): no such class (User, Channel, Membership, or one --datasync-class defines)")
            }
            guard ChatKeyset.History(rawValue: keysetHistory) != nil else {
                throw ValidationError("--keyset-history must be interleaved or one-after-another")
            }
            guard let objects = ChatKeyset.Objects(rawValue: keysetObjects) else {
                throw ValidationError("--keyset-objects must be app-context or datasync")
            }
            if objects == .dataSync, secretKey == nil {
                throw ValidationError("--keyset-objects datasync needs --secret-key (DataSync needs Access Manager, as on PubNub)")
            }
            if memberTokenFile != nil, secretKey == nil { throw ValidationError("--member-token-file needs --secret-key") }
            guard FaultProfile.named(faults) != nil else {
                throw ValidationError(
                    "unknown fault profile \"\(faults)\" (\(FaultProfile.all.map(\.name).joined(separator: ", ")))")
            }
            guard (0...65535).contains(port) else { throw ValidationError("port must be 0-65535") }
            if let dripRate, !(0.001...1_000_000).contains(dripRate) {
                throw ValidationError("--drip must be 0.001-1000000 bytes per second")
            }
            if let publishDelay, !(0...3600).contains(publishDelay) {
                throw ValidationError("--publish-delay must be 0-3600 seconds")
            }
            guard (0...3600).contains(subscribeHold) else {
                throw ValidationError("--subscribe-hold must be 0-3600 seconds")
            }
            if let secretKey, secretKey.isEmpty { throw ValidationError("--secret-key must not be empty") }
            if let adminKey, adminKey.isEmpty { throw ValidationError("--admin-key must not be empty") }
            guard (0...10_000).contains(keysetChannels), (0...1000).contains(keysetMessages), (0...100_000).contains(keysetUsers) else {
                throw ValidationError("--keyset-channels must be 0-10000, --keyset-messages 0-1000, --keyset-users 0-100000")
            }
        }

        /// The misbehaviour the flags ask for (validated above, so the conversions cannot trap).
        var misbehaviour: ServerMisbehaviour {
            ServerMisbehaviour(
                dripInterval: dripRate.map { .seconds(1 / $0) }, publishDelay: publishDelay.map { .seconds($0) },
                historyIgnoresStart: historyIgnoresStart)
        }

        /// `, misbehaving: ...` for the startup line on stderr, or nothing.
        var misbehaviourSummary: String {
            var parts: [String] = []
            if let dripRate { parts.append("drip \(dripRate) B/s") }
            if let publishDelay { parts.append("publish delay \(publishDelay) s") }
            if historyIgnoresStart { parts.append("history ignores start") }
            return parts.isEmpty ? "" : ", misbehaving: " + parts.joined(separator: ", ")
        }

        func perform() async throws {
            // The clock `/simulator/clock` moves (token TTLs, presence timeouts, timetokens).
            let clock = OffsetClock()
            let server = PubNubServer(publishKey: publishKey, subscribeKey: subscribeKey, clock: clock)
            await server.configureSubscribe(SubscribeSettings(hold: .seconds(subscribeHold)))
            await server.configureRequestLine(maximum: maxRequestLine > 0 ? maxRequestLine : nil)
            for type in try dataSyncClasses() { await server.defineDataSyncClass(type) }
            for name in datasyncEventsOff { await server.setDataSyncEvents(className: name, on: false) }
            if keysetChannels > 0 {
                var keyset = ChatKeyset(
                    channels: keysetChannels, messagesPerChannel: keysetMessages, users: keysetUsers, member: keysetMember)
                keyset.objects = ChatKeyset.Objects(rawValue: keysetObjects) ?? .appContext
                keyset.history = ChatKeyset.History(rawValue: keysetHistory) ?? .interleaved
                try await keyset.seed(server)
            }
            // After seeding: the keyset's unsigned requests are the simulator's own.
            await server.configureAccess(secretKey: secretKey)
            await server.configureAdminKey(adminKey)
            if let memberTokenFile {
                let token = try await server.grantToken(
                    ttlMinutes: 24 * 60, grants: ChatKeyset.memberGrants, authorizedUserId: keysetMember)
                // Owner-only: the file holds a credential.
                guard FileManager.default.createFile(
                    atPath: memberTokenFile, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600])
                else { throw ValidationError("cannot write --member-token-file \(memberTokenFile)") }
            }
            let plan = FaultPlan(seed: seed, profile: FaultProfile.named(faults)!)
            let faults = self.faults
            let seed = self.seed
            let log = try requestLog.map { try RequestLog(path: $0) }
            let misbehaving = misbehaviourSummary
            let access = secretKey == nil ? "" : ", access manager: on"
            try await SimulatorHTTPServer.run(
                server: server, plan: plan, port: port, handleSignals: true, misbehaviour: misbehaviour, requestLog: log,
                clockControl: clock
            ) { port in
                // Unbuffered, so that a parent process reading a pipe sees it at once.
                Output.standardOutput("listening on http://127.0.0.1:\(port)\n")
                Output.standardError("faults: \(faults), seed: \(seed)\(misbehaving)\(access)\n")
            }
        }
    }
}

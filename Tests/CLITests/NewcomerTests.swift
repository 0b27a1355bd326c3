import Foundation
import Testing

extension CLI {
    /// The package's folder (README.md, docs/).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}

/// The command line as a newcomer meets it: safe defaults, hints for the usual mistakes, quiet
/// output, joining a channel, and the README's walkthrough pasted as written.
@Suite("the command line as a newcomer meets it", .serialized)
struct NewcomerTests {
    /// No origin and no keys from anywhere: PubNub's real service with nothing configured.
    static let unconfigured = ["PUBNUB_ORIGIN": "", "PUBNUB_SUBSCRIBE_KEY": "", "PUBNUB_PUBLISH_KEY": "", "PUBNUB_USER_ID": "me"]

    @Test("PubNub's real origin without a subscribe key is refused (exit 64, naming the option); a key or a loopback origin is not")
    func realOriginNeedsKeys() async throws {
        let store = CLI.temporaryStore()
        for command in [["send", "--channel", "general", "--text", "hello"], ["sync"]] {
            let refused = try await Self.run(command + ["--store", store], environment: Self.unconfigured)
            #expect(refused.status == 64, "\(command): \(refused.stderr)")
            #expect(refused.stderr.contains("--subscribe-key") && refused.stderr.contains("PUBNUB_SUBSCRIBE_KEY"), "\(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: store), "refused before the store was created")
        let keyed = try await Self.run(
            ["send", "--store", store, "--channel", "general", "--text", "hello", "--subscribe-key", "sub-c-mine", "--publish-key", "pub-c-mine"],
            environment: Self.unconfigured)
        #expect(keyed.status == 0, "\(keyed.stderr)")
        let local = try await Self.run(
            ["send", "--store", store, "--channel", "general", "--text", "hello", "--origin", "http://127.0.0.1:9"],
            environment: Self.unconfigured)
        #expect(local.status == 0, "\(local.stderr)")
    }

    @Test("a loopback origin without a scheme gets the fix; a store whose folder is missing names the folder")
    func hints() async throws {
        let noScheme = try await Self.run(["send", "--store", CLI.temporaryStore(), "--channel", "c", "--text", "t", "--origin", "127.0.0.1:8090"])
        #expect(noScheme.status == 64)
        #expect(noScheme.stderr.contains("--origin http://127.0.0.1:8090"), "\(noScheme.stderr)")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pnreplicate-missing-\(UUID().uuidString)").path
        let missing = try await Self.run(["send", "--store", folder + "/chat.sqlite", "--channel", "c", "--text", "t"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("its folder \(folder) does not exist"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder), "no folder is made for a mistyped path")
    }

    @Test("member set with no field joins: the membership is stored (status joined), unread lists the channel at 0, show members lists it")
    func joinWithNoFields() async throws {
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me"]
        #expect(try await Self.run(["send", "--store", store, "--channel", "general", "--text", "hello"], environment: env).status == 0)
        let before = try await Self.run(["unread", "--store", store], environment: env)
        #expect(before.stdout.contains("no memberships"), "\(before.stdout)")

        let joined = try await Self.run(["member", "set", "--store", store, "--channel", "general", "--json"], environment: env)
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(try CLI.json(joined.stdout)["disposition"] as? String == "enqueued")
        let unread = try CLI.json(try await Self.run(["unread", "--store", store, "--json"], environment: env).stdout)
        #expect(unread["general"] as? Int == 0, "\(unread)")

        #expect(try await Self.run(["join", "--store", store, "--channel", "random"], environment: env).status == 0)
        let shown = try await Self.run(["show", "members", "--store", store], environment: env)
        #expect(shown.status == 0, "\(shown.stderr)")
        let rows = shown.stdout.split(separator: "\n").filter { $0.contains("joined") }
        #expect(rows.count == 2 && rows.contains { $0.hasPrefix("general") } && rows.contains { $0.hasPrefix("random") }, "\(shown.stdout)")
        // Joining someone else is not a thing (that is an invitation): an empty edit of another user is refused.
        let other = try await Self.run(["member", "set", "--store", store, "--channel", "general", "--user", "bob"], environment: env)
        #expect(other.status == 1 && other.stderr.contains("changes no field"), "\(other.stderr)")
    }

    @Test("outbox list shows what waits, in order, with its state")
    func outboxList() async throws {
        let store = CLI.temporaryStore()
        #expect(try await Self.run(["outbox", "list", "--store", store]).status == 1, "no store yet: refused, not created")
        for text in ["one", "two"] {
            #expect(try await Self.run(["send", "--store", store, "--channel", "general", "--text", text]).status == 0)
        }
        let listed = try await Self.run(["outbox", "list", "--store", store])
        #expect(listed.status == 0, "\(listed.stderr)")
        let sends = listed.stdout.split(separator: "\n").filter { $0.contains(" send ") && $0.contains("pending") }
        #expect(sends.count == 2, "\(listed.stdout)")
        let json = try await Self.run(["outbox", "list", "--store", store, "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(entries.count == 2)
    }

    @Test("demo loop and a new store write nothing to stderr; --verbose shows the migrations")
    func quietByDefault() async throws {
        let loop = try await Self.run(["demo", "loop"])
        #expect(loop.status == 0)
        #expect(loop.stderr.isEmpty, "\(loop.stderr)")
        let store = CLI.temporaryStore()
        let quiet = try await Self.run(["send", "--store", store, "--channel", "c", "--text", "t"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        let verbose = try await Self.run(["migrate", "--store", CLI.temporaryStore(), "--verbose"])
        #expect(verbose.stderr.contains("applied migration"), "\(verbose.stderr)")
    }

    @Test("help and status say each thing once")
    func helpAndStatus() async throws {
        let help = try await Self.run(["listen", "--help"])
        #expect(!help.stdout.contains("default 300)"), "\(help.stdout)")
        #expect(help.stdout.contains("(default: 300)"))
        let store = CLI.temporaryStore()
        #expect(try await Self.run(["send", "--store", store, "--channel", "c", "--text", "t"]).status == 0)
        let status = try await Self.run(["status", "--store", store])
        // A row is `label  value`: the label ends at the first run of two spaces.
        let labels = status.stdout.split(separator: "\n").map { line in
            line.range(of: "  ").map { String(line[..<$0.lowerBound]) } ?? String(line)
        }
        #expect(labels.filter { $0 == "outbox" }.count == 1, "\(status.stdout)")
    }

    @Test("the README's shell walkthrough runs as written, line by line", .timeLimit(.minutes(10)))
    func readmeWalkthrough() async throws {
        let readme = try String(contentsOf: CLI.root.appending(path: "README.md"), encoding: .utf8)
        let lines = try #require(Self.shellBlock(after: "Try it against the simulator from a shell", in: readme))
        let store = CLI.temporaryStore()
        var environment: [String: String] = [:]
        var background: ChildProcess?
        defer { background?.stop(grace: .seconds(10)) }
        var ran = 0
        for line in lines {
            let words = try Self.words(of: line)
            guard let first = words.first else { continue }
            switch first {
            case "swift":
                #expect(words == ["swift", "build"])  // the tests run on a build already made
            case "export":
                for assignment in words.dropFirst() {
                    let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
                    try #require(parts.count == 2, "\(line)")
                    // The walkthrough's store is a shared path; the test's own is used instead.
                    environment[parts[0]] = parts[0] == "PNREPLICATE_STORE" ? store : parts[1]
                }
            case "kill":
                #expect(words == ["kill", "%1"] && background != nil, "\(line)")
                background?.terminate()
                await background?.ended()
                background = nil
            case ".build/debug/pnreplicate":
                var arguments = Array(words.dropFirst())
                if arguments.last == "&" {
                    arguments.removeLast()
                    let process = try ChildProcess(CLI.binary.path, arguments, environment: environment, stdout: .pipe, stderr: .nullDevice)
                    let said = try await offPool { process.stdout(when: { $0.contains("\n") }, within: .seconds(30)) }
                    try #require(said.contains("listening on http://127.0.0.1:8090"), "the simulator said: \(said)")
                    background = process
                } else {
                    let (command, env) = (arguments, environment)
                    let result = try await Self.run(command, environment: env)
                    #expect(result.status == 0, "`\(line)` exited \(result.status): \(result.stderr)")
                    #expect(result.stderr.isEmpty, "`\(line)` wrote to stderr: \(result.stderr)")
                    if arguments.first == "show" { #expect(result.stdout.contains("hello"), "\(result.stdout)") }
                    if arguments.first == "unread" { #expect(result.stdout.contains("general"), "\(result.stdout)") }
                }
                ran += 1
            default:
                Issue.record("the walkthrough has a line the test does not know: \(line)")
            }
        }
        #expect(ran >= 7, "the walkthrough ran \(ran) commands")
        #expect(background == nil, "the walkthrough stops its simulator")
    }

    @Test("no file under docs/ nor the README points into ../shared/ (a folder users do not have)")
    func noInternalLinks() throws {
        let root = CLI.root
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appending(path: "docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        #expect(docs.count > 10)
        for file in ["README.md"] + docs {
            let text = try String(contentsOf: root.appending(path: file), encoding: .utf8)
            #expect(!text.contains("../shared/") && !text.contains("shared/reference"), "\(file) links into ../shared/")
        }
    }

    /// Runs `pnreplicate` off Swift's cooperative pool: a child process is waited for on a thread of
    /// its own, so that the other suites running meanwhile keep both of the pool's threads.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLI.Result {
        try await offPool { try CLI.runBlocking(arguments, environment: environment) }
    }

    /// The lines of the first ```sh block after the line containing `marker`, without comments.
    static func shellBlock(after marker: String, in text: String) -> [String]? {
        let lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.contains(marker) }),
            let open = lines[start...].firstIndex(of: "```sh"),
            let close = lines[(open + 1)...].firstIndex(of: "```")
        else { return nil }
        return lines[(open + 1)..<close].map { line in
            // A comment starts at a `#` after a space (none of the commands quotes one).
            let code = line.range(of: " #").map { String(line[..<$0.lowerBound]) } ?? line
            return code.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
    }

    /// A shell line's words: split on spaces, double quotes group (no escapes, no variables).
    static func words(of line: String) throws -> [String] {
        var words: [String] = [], word = "", quoted = false, inWord = false
        for character in line {
            if character == "\"" {
                quoted.toggle()
                inWord = true
            } else if character == " ", !quoted {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        try #require(!quoted, "unbalanced quote in \(line)")
        if inWord { words.append(word) }
        return words
    }
}

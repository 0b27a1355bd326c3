import Foundation
import ReplicaModel
import ReplicaStore
import Testing

#if canImport(Glibc)
import Glibc
/// A TCP socket type (an enum case in Glibc, a plain constant in Darwin).
private let streamSocketType = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
/// A TCP socket type (an enum case in Glibc, a plain constant in Darwin).
private let streamSocketType = SOCK_STREAM
#endif

// Free functions, so that the C calls are not shadowed by `SilentPort.socket`.
private func openStreamSocket() -> Int32 { socket(AF_INET, streamSocketType, 0) }
private func bindSocket(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    bind(fd, address, length)
}

/// A TCP port that listens but never accepts: any connection to it would be left pending.
struct SilentPort {
    let socket: Int32
    let port: Int

    init() throws {
        let fd = openStreamSocket()
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let size = length
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bindSocket(fd, $0, size) }
        }
        try #require(bound == 0 && listen(fd, 16) == 0)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether anyone connected.
    var wasContacted: Bool {
        let client = accept(socket, nil, nil)
        if client >= 0 { close(client) }
        return client >= 0
    }
}

@Suite("pnreplicate --dry-run")
struct DryRunTests {
    /// Replaces ids and times, which differ on every run, with stable placeholders.
    static func normalize(_ text: String) throws -> String {
        var result = text
        var names: [String: String] = [:]
        let uuid = try Regex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        for match in text.matches(of: uuid) {
            let id = String(text[match.range])
            if names[id] == nil { names[id] = "<id\(names.count + 1)>" }
        }
        for (id, name) in names { result = result.replacingOccurrences(of: id, with: name) }
        result = result.replacing(try Regex("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z"), with: "<time>")
        return result
    }

    @Test("lists every op kind in send order with the exact request, without a request or a change to the store")
    func golden() async throws {
        let store = CLI.temporaryStore()
        let env = ["PUBNUB_USER_ID": "me", "PUBNUB_PUBLISH_KEY": "pub", "PUBNUB_SUBSCRIBE_KEY": "sub"]
        do {
            // A message that was already sent, with this user's reaction on it.
            let chat = try ChatStore<DefaultChatCustom>.open(at: store)
            let sent = try ChatMessage<FlatCustom>(
                id: "sent-1", text: "earlier", createdAt: ISOTimestamp(nanoseconds: 0), timetoken: 17_000_000_000_000_000,
                userId: "me", channelId: "general")
            try await chat.load(messages: [sent])
            try await chat.load(messageActions: [
                try ChatMessageAction(type: "reactions", value: "👍", userId: "me", channelId: "general",
                                      messageTimetoken: 17_000_000_000_000_000, actionTimetoken: 17_000_000_000_000_100),
            ])
        }
        func cli(_ arguments: [String]) async throws -> String {
            let result = try await CLI.run(arguments + ["--store", store], environment: env)
            try #require(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout
        }
        let sendOutput = try await cli(["send", "--channel", "general", "--text", "hello", "--json"])
        let messageId = try #require(try CLI.json(sendOutput)["id"] as? String)
        _ = try await cli(["react", "--message", messageId, "--value", "🎉"])
        _ = try await cli(["react", "--message", "sent-1", "--value", "👍", "--remove"])
        _ = try await cli(["member", "set", "--channel", "general", "--status", "joined"])
        _ = try await cli(["member", "remove", "--channel", "old"])
        _ = try await cli(["user", "set", "--id", "me", "--name", "Me"])
        _ = try await cli(["user", "set", "--id", "me", "--status", "away"])
        _ = try await cli(["user", "remove", "--id", "gone"])
        _ = try await cli(["channel", "set", "--id", "general", "--name", "General", "--custom", #"{"topic":"chat"}"#])
        _ = try await cli(["channel", "remove", "--id", "old"])

        let files = try FileManager.default.contentsOfDirectory(atPath: (store as NSString).deletingLastPathComponent).sorted()
        // Each write command closed its store before it exited: nothing of SQLite's is left open.
        #expect(!files.contains { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") }, "\(files)")
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let silent = try SilentPort()
        let result = try await CLI.run(["--dry-run", "--store", store, "--origin", "http://127.0.0.1:\(silent.port)"], environment: env)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!silent.wasContacted)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        let after = try FileManager.default.contentsOfDirectory(atPath: (store as NSString).deletingLastPathComponent).sorted()
        #expect(after == files, "before: \(files), after: \(after)")
        let expected = """
            dry run: 9 ops in the outbox; no request made, nothing changed
            1. <id1> send lane=send:general state=pending attempts=0
               waiting  ready
               request  POST /publish/pub/sub/0/general/0?pnsdk=pnreplicate/0.1&uuid=me&meta={"pnr_op":"<id1>"}
               body     {"createdAt":"<time>","id":"<id2>","text":"hello"}
            2. <id3> addReaction lane=reactions:<id2> state=pending attempts=0
               waiting  parent <id1> pending
               request  (not known yet: the message's timetoken)
            3. <id4> removeReaction lane=reactions:sent-1 state=pending attempts=0
               waiting  ready
               request  DELETE /v1/message-actions/sub/channel/general/message/17000000000000000/action/17000000000000100?pnsdk=pnreplicate/0.1&uuid=me
            4. <id5> setMembership lane=member:general/me state=pending attempts=0
               waiting  ready
               request  PATCH /v2/objects/sub/uuids/me/channels?pnsdk=pnreplicate/0.1&uuid=me&limit=100&include=custom,status,type,channel,channel.custom,channel.type,channel.status
               body     {"delete":[],"set":[{"channel":{"id":"general"},"status":"joined"}]}
            5. <id6> removeMembership lane=member:old/me state=pending attempts=0
               waiting  ready
               request  PATCH /v2/objects/sub/uuids/me/channels?pnsdk=pnreplicate/0.1&uuid=me&limit=100&include=custom,status,type,channel,channel.custom,channel.type,channel.status
               body     {"delete":[{"channel":{"id":"old"}}],"set":[]}
            6. <id7> setUser lane=user:me state=pending attempts=0
               waiting    ready
               coalesced  merged edit <id8>: status
               request    PATCH /v2/objects/sub/uuids/me?pnsdk=pnreplicate/0.1&uuid=me&include=custom,status,type
               body       {"name":"Me","status":"away"}
            7. <id9> removeUser lane=user:gone state=pending attempts=0
               waiting  ready
               request  DELETE /v2/objects/sub/uuids/gone?pnsdk=pnreplicate/0.1&uuid=me
            8. <id10> setChannel lane=channel:general state=pending attempts=0
               waiting  ready
               request  PATCH /v2/objects/sub/channels/general?pnsdk=pnreplicate/0.1&uuid=me&include=custom,status,type
               body     {"custom":{"topic":"chat"},"name":"General"}
            9. <id11> removeChannel lane=channel:old state=pending attempts=0
               waiting  ready
               request  DELETE /v2/objects/sub/channels/old?pnsdk=pnreplicate/0.1&uuid=me

            """
        let actual = try Self.normalize(result.stdout)
        #expect(actual == expected, "actual dry run:\n\(actual)")
    }
}

import Foundation
import ReplicaModel
import Testing
@testable import ReplicaStore

/// The rules docs/architecture.md's owner table gives the store, each tested here in the store's
/// own target (the version rule has its own suite, `VersionRuleTests`).
@Suite("The rules the store owns")
struct StoreRulesTests {
    @Test("one drainer per store file: a second lease is refused while the first is held, and granted after")
    func oneDrainerPerFile() throws {
        let path = Fixture.temporaryPath()
        let store = try Store.open(at: path)
        let first = try #require(try store.maintenance.tryAcquireDrainLease())
        #expect(first.isHeld && first.lockPath == path + ".lock")
        #expect(try store.maintenance.tryAcquireDrainLease() == nil)
        // Another handle on the same file is another holder too.
        let other = try Store.open(at: path)
        #expect(try other.maintenance.tryAcquireDrainLease() == nil)
        #expect(store.maintenance.drainLeaseHolder() == getpid())
        first.release()
        #expect(!first.isHeld)
        let second = try #require(try other.maintenance.tryAcquireDrainLease())
        #expect(second.isHeld)
        second.release()
    }

    @Test("a store's files are removed together, the backups and the files area too, leaving its folder as it was; never while its lock is held")
    func removeEveryFile() async throws {
        let path = Fixture.temporaryPath()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try "another app's".write(toFile: folder + "/other.txt", atomically: true, encoding: .utf8)
        do {
            let store = try Store.open(at: path)
            try await store.storeTransaction { tx in _ = try tx.upsert(user: try Fixture.user("u")) }
            try store.attachments.write(Data("bytes".utf8), as: "f1", in: .cache)
            try store.maintenance.backup(to: try #require(store.maintenance.defaultBackupPath()))
            let lease = try #require(try store.maintenance.tryAcquireDrainLease())
            // Held (here by this process): nothing is removed.
            #expect(throws: StoreError.self) { try StoreFiles.remove(at: path) }
            #expect(FileManager.default.fileExists(atPath: path))
            lease.release()
        }
        let files = StoreFiles.existing(at: path)
        #expect(files.first == path && files.contains(path + ".files") && files.contains(path + ".lock"), "\(files)")
        #expect(files.contains { $0.contains(".sqlite.backup-") }, "\(files)")
        let removed = try StoreFiles.remove(at: path)
        #expect(removed == files)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["other.txt"])
        // A new store at the same path starts empty.
        let again = try Store.open(at: path)
        #expect(try again.fetchNow(again.queries.user(id: "u")) == nil)
    }

    /// `entity` with every field of its table set: text fields to `<wire name>-value`, custom data
    /// to `{"k": "<wire name>"}`.
    private func everyField<E: ReplicatedFields>(_ entity: E) throws -> E {
        var fields: [String: JSONValue] = [:]
        for field in E.fields { fields[field.wireName] = field.isCustom ? ["k": .string(field.wireName)] : .string("\(field.wireName)-value") }
        return try entity.applying(fields)
    }

    @Test("every field of the user, channel and membership tables is written to its column and read back")
    func fieldTablesRoundTrip() async throws {
        let store = try Fixture.store()
        let user = try everyField(try Fixture.user("u"))
        let channel = try everyField(try Fixture.channel("c"))
        var member = try everyField(try Fixture.member("c", "u"))
        member.channel = channel
        member.user = user
        try await store.load(users: [user])
        try await store.load(channels: [channel])
        try await store.load(members: [member])
        let storedUser = try #require(try await store.fetch(store.queries.user(id: "u")))
        let storedChannel = try #require(try await store.fetch(store.queries.channel(id: "c")))
        let storedMember = try #require(try await store.fetch(store.queries.member(channelId: "c", userId: "u")))
        #expect(try storedUser.wireFields == user.wireFields)
        #expect(try storedChannel.wireFields == channel.wireFields)
        #expect(try storedMember.wireFields == member.wireFields)
        #expect(try storedMember.wireFields.values.allSatisfy { $0 != .null })
        #expect(storedMember.updated == member.updated && storedMember.eTag == member.eTag)
        #expect(try storedMember.channel.wireFields == channel.wireFields && storedMember.user.wireFields == user.wireFields)
    }

    @Test("a membership's presence: its state kept only while present, its version untouched, no row no write")
    func presenceWrites() async throws {
        let store = try Fixture.store()
        let member = try Fixture.member("c", "u", status: "joined", at: 5)
        try await store.load(members: [member])
        #expect(try await store.setPresence(channelId: "c", userId: "u", isPresent: true, state: ["mood": "busy"]))
        var stored = try #require(try await store.fetch(store.queries.member(channelId: "c", userId: "u")))
        #expect(stored.isPresent == true && stored.presenceState == ["mood": "busy"])
        #expect(stored.updated == member.updated && stored.eTag == member.eTag && stored.status == "joined")
        #expect(try await store.setPresence(channelId: "c", userId: "u", isPresent: false, state: ["mood": "gone"]))
        stored = try #require(try await store.fetch(store.queries.member(channelId: "c", userId: "u")))
        #expect(stored.isPresent == false && stored.presenceState == nil)
        // A newer membership version from the server keeps the presence columns.
        try await store.load(members: [try Fixture.member("c", "u", status: "away", at: 6)])
        stored = try #require(try await store.fetch(store.queries.member(channelId: "c", userId: "u")))
        #expect(stored.status == "away" && stored.isPresent == false)
        #expect(try await store.setPresence(channelId: "c", userId: "nobody", isPresent: true) == false)
        #expect(try await store.fetch(store.queries.member(channelId: "c", userId: "nobody")) == nil)
    }

    @Test("an in-memory store has no lock file and always grants the lease")
    func inMemoryLease() throws {
        let store = try Fixture.store()
        #expect(store.maintenance.drainLeasePath == nil)
        #expect(try #require(try store.maintenance.tryAcquireDrainLease()).isHeld)
        #expect(try #require(try store.maintenance.tryAcquireDrainLease()).isHeld)
    }

    @Test("stored error text is capped in bytes, on a character boundary, with the original size", arguments: [
        "x", String(repeating: "e", count: StoredErrorText.maxBytes), String(repeating: "e", count: StoredErrorText.maxBytes + 1),
        String(repeating: "é", count: 3_000), String(repeating: "👩‍👩‍👧", count: 400), String(repeating: "z", count: 50_000_000),
    ])
    func errorTextCap(text: String) {
        let capped = StoredErrorText.capped(text)
        #expect(capped.utf8.count <= StoredErrorText.maxBytes)
        if text.utf8.count <= StoredErrorText.maxBytes {
            #expect(capped == text)
        } else {
            let note = "…(truncated, \(text.utf8.count) bytes)"
            #expect(capped.hasSuffix(note))
            let kept = String(capped.dropLast(note.count))
            #expect(text.hasPrefix(kept) && !kept.isEmpty)
            // The prefix is whole characters: the next one would not have fit.
            let next = text[text.index(text.startIndex, offsetBy: kept.count)]
            #expect(kept.utf8.count + next.utf8.count + note.utf8.count > StoredErrorText.maxBytes)
        }
    }

    @Test("timetoken scopes (history, reactions, live) keep a timetoken; object listings keep a cursor")
    func checkpointScopes() async throws {
        let store = try Fixture.store()
        let tt = Timetoken(rawValue: 17_900_000_000_000_123)
        for scope in [SyncCheckpoint.history("a b"), SyncCheckpoint.reactions("c"), SyncCheckpoint.live("d")] {
            try await store.saveCheckpoint(SyncCheckpoint(scope: scope, applied: tt, fillTop: tt, fillCursor: tt))
            let read = try #require(try await store.fetch(store.queries.checkpoint(scope)))
            #expect(read.applied == tt && read.cursor == nil && read.fillTop == tt && read.fillCursor == tt)
            #expect(read.isFilling)
        }
        for scope in [SyncCheckpoint.users, SyncCheckpoint.channels] {
            try await store.saveCheckpoint(SyncCheckpoint(scope: scope, cursor: "MjAy"))
            let read = try #require(try await store.fetch(store.queries.checkpoint(scope)))
            #expect(read.cursor == "MjAy" && read.applied == nil && !read.isFilling)
        }
    }

    @Test("who may change what a message shows: the author by default, named moderators, or anyone")
    func editAuthority() async throws {
        let store = try Fixture.store()
        try await store.load(messages: [try Fixture.message("m1", user: "alice", timetoken: 17_900_000_000_000_001)])
        func allowed(_ user: String) async throws -> Bool? {
            try await store.storeTransaction { try $0.messages.editPermission(messageId: "m1", user: user)?.allowed }
        }
        #expect(try await store.editAuthority() == .author)
        #expect(try await allowed("alice") == true)
        #expect(try await allowed("mod") == false)
        #expect(try await store.storeTransaction { try $0.messages.editPermission(messageId: "gone", user: "alice") } == nil)

        try await store.setEditAuthority(.authorAndModerators(["mod"]))
        #expect(try await store.editAuthority() == .authorAndModerators(["mod"]))
        #expect(try await allowed("mod") == true)
        #expect(try await allowed("mallory") == false)

        try await store.setEditAuthority(.anyone)
        #expect(try await allowed("mallory") == true)
        // `*` means anyone in the table: it is never accepted as a moderator's id.
        await #expect(throws: StoreError.self) { try await store.setEditAuthority(.authorAndModerators(["*"])) }
        #expect(try await store.editAuthority() == .anyone)
    }

    /// One operation of each kind, with every optional field set where the kind has one.
    static let operations: [OutboxOperation] = {
        let tt = Timetoken(rawValue: 17_900_000_000_000_007)
        let target = ReactionTarget(channel: "general", messageId: "m1", messageTimetoken: tt, type: "reaction", value: "👍")
        return [
            .send(MessageSend(channel: "general", messageId: "m1", message: ["text": "hi"], meta: ["k": "v"], customMessageType: "text-v2")),
            .addReaction(target),
            .removeReaction(target, actionTimetoken: tt),
            .setMembership(channel: "general", user: "alice", fields: ["status": "joined"]),
            .removeMembership(channel: "general", user: "alice"),
            .setUser(id: "alice", fields: ["name": "Alice", "email": .null]),
            .removeUser(id: "alice"),
            .setChannel(id: "general", fields: ["custom": ["pinned": "1"]]),
            .removeChannel(id: "general"),
            .mention(MentionNotice(user: "bob", channel: "general", messageId: "m1", messageTimetoken: tt, parentChannel: "root")),
            .receipt(channel: "general", messageTimetoken: tt),
            .hardDelete(channel: "general", messageId: "m1", messageTimetoken: tt, preserveFiles: false),
            .report(channel: "general", messageId: "m1", body: ["type": "report", "reason": "spam"]),
            .setMuteList(owner: "alice", muted: ["bob", "troll"]),
            .invite(InviteNotice(user: "bob", channel: "direct.1", channelType: "direct")),
            .push(PushRegistration(token: "t0k", service: "apns2", topic: "com.example", environment: "production", change: .add(["a", "b"]))),
            .push(PushRegistration(token: "t0k", service: "fcm", change: .removeDevice)),
            .readPositions(ReadPositions(user: "me", marks: [
                ReadMark(channel: "general", timetoken: Timetoken(rawValue: 17_000_000_000_000_001), previous: nil),
                ReadMark(channel: "lobby", timetoken: Timetoken(rawValue: UInt64.max), previous: Timetoken(rawValue: 9_007_199_254_740_993), eTag: "AbC"),
            ])),
            .setAppRecord(AppRecordWrite(
                kind: .entity, className: "Poll", id: "poll.1", replacesWhole: true, classVersion: 2, status: "open",
                payload: ["question": "Lunch?", "options": ["a", "b"], "closesAt": .null, "votes": 1.5], concurrency: .touchedFields)),
            .setAppRecord(AppRecordWrite(
                kind: .relationship, className: "Vote", id: "vote.1.me", classVersion: 1, payload: [:],
                endA: "poll.1", endB: "me")),
            .removeAppRecord(AppRecordTarget(kind: .relationship, className: "Vote", id: "vote.1.me")),
        ]
    }()

    @Test("what an op carries survives its row form, for every kind", arguments: operations)
    func operationRowForm(operation: OutboxOperation) throws {
        for rebase in [false, true] {
            let row = operation.payload(rebase: rebase)
            let stored = try JSONDecoder().decode(OutboxPayload.self, from: JSONEncoder().encode(row))
            #expect(try OutboxOperation(kind: operation.kind, payload: stored) == operation)
            #expect((stored.rebase == true) == rebase)
        }
    }

    @Test("every kind is covered above, and a row missing a field its kind needs is refused")
    func everyKindAndIncompleteRows() throws {
        #expect(Set(Self.operations.map(\.kind)) == Set(OutboxKind.allCases))
        for kind in OutboxKind.allCases {
            #expect(throws: (any Error).self, "\(kind) from an empty row") {
                try OutboxOperation(kind: kind, payload: OutboxPayload())
            }
        }
    }
}

import Foundation
import GRDB
import ReplicaModel
@testable import ReplicaStore

typealias Store = ChatStore<DefaultChatCustom>
typealias User = ChatUser<FlatCustom>
typealias Channel = ChatChannel<FlatCustom>
typealias Member = ChatMember<DefaultChatCustom>
typealias Message = ChatMessage<FlatCustom>

/// Fixtures shared by the store tests.
enum Fixture {
    static func store() throws -> Store { try Store.inMemory() }

    static func ts(_ seconds: Int64) -> ISOTimestamp {
        ISOTimestamp(nanoseconds: (1_600_000_000 + seconds) * 1_000_000_000, fractionDigits: 6)
    }

    static func user(_ id: String, name: String? = nil, at seconds: Int64 = 0, eTag: String? = nil) throws -> User {
        try User(id: id, name: name ?? id, updated: ts(seconds), eTag: eTag ?? "u-\(id)-\(seconds)")
    }

    static func channel(
        _ id: String, name: String? = nil, type: String = "default", at seconds: Int64 = 0, eTag: String? = nil
    ) throws -> Channel {
        try Channel(id: id, name: name ?? id, type: type, updated: ts(seconds), eTag: eTag ?? "c-\(id)-\(seconds)")
    }

    static func member(
        _ channel: String, _ user: String, status: String? = nil, at seconds: Int64 = 0, eTag: String? = nil,
        present: Bool? = nil
    ) throws -> Member {
        var member = try Member(
            channelId: channel, userId: user, status: status, updated: ts(seconds),
            eTag: eTag ?? "m-\(channel)-\(user)-\(seconds)")
        member.isPresent = present
        return member
    }

    static func message(
        _ id: String, channel: String = "general", user: String = "alice", text: String? = nil,
        timetoken: UInt64? = nil
    ) throws -> Message {
        try Message(
            id: id, text: text ?? "text of \(id)", createdAt: ts(0), timetoken: timetoken.map(Timetoken.init(rawValue:)),
            userId: user, channelId: channel)
    }

    static func temporaryPath(_ name: String = "store") -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("pnreplicate-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("\(name).sqlite").path
    }
}

import Foundation
import PubNubReplica

/// The one thing an app configures: PubNub's keys, the user, and where the store lives.
public func chatConfiguration() throws -> ReplicaConfiguration {
    let folder = try FileManager.default.url(
        for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
    return ReplicaConfiguration(
        publishKey: "pub-c-your-key", subscribeKey: "sub-c-your-key", userId: "alice",
        store: .file(folder.appending(path: "chat.sqlite").path))
}

/// Says hello in `channel` (stored at once, sent as soon as PubNub can be reached), then shows
/// the channel's messages and the replica's status as they change, until `isDone` says so.
public func run(
    _ replica: Replica<DefaultChatCustom>, in channel: String = "general",
    until isDone: @escaping @Sendable ([ChatMessage<FlatCustom>]) -> Bool = { _ in false }
) async throws {
    await replica.start()
    _ = try await replica.messages.send(text: "Hello from pnreplicate", to: channel)

    let statusLine = Task {
        for await status in replica.statuses() { print("[\(status)]") }  // [live, 1 pending]
    }
    defer { statusLine.cancel() }

    // On screen, so kept complete: its reactions and members too, not only its messages.
    for try await messages in replica.observe(replica.queries.messages(inChannel: channel), keepingHot: channel) {
        for message in messages.suffix(3) {
            print(message.userId, message.text, message.timetoken == nil ? "(sending)" : "")
        }
        if isDone(messages) { break }
    }
}

// In the app:
//     let replica = try Replica<DefaultChatCustom>(try chatConfiguration())
//     try await run(replica)

import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate demo [samples]`: create a store, migrate it, load the seed's sample user, channel
/// and message, and show the status.
struct DemoSamplesCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "samples", abstract: "Create a store, migrate it, load sample data and show its status.")

    @OptionGroup var options: StoreOptionsGroup

    func perform() async throws {
        let path = options.storePath
        let report = try Replica<DefaultChatCustom>.migrateStore(at: path, options: options.storeOptions(migration: .manual))
        // A replica that sends nothing: the samples are stored as they are.
        var configuration = ReplicaConfiguration(publishKey: "demo", subscribeKey: "demo", userId: actingUser(nil), store: .file(path))
        configuration.storeOptions = options.storeOptions(migration: .requireCurrent)
        let replica = try Replica<DefaultChatCustom>(configuration)
        let loaded = try await SampleData.load(into: replica)
        let status = try await replica.storeStatus()
        if options.json {
            try Output.json(DemoOutput(migrated: report.performed, sampleRowsWritten: loaded, status: status))
        } else {
            MigrateCommand.printText(report, path: path)
            print("sample     \(loaded) rows written (re-running writes none: same eTags)")
            print("")
            StatusCommand.printText(status, path: path)
        }
    }
}

struct DemoOutput: Encodable {
    let migrated: [String]
    let sampleRowsWritten: Int
    let status: StoreStatus
}

/// The seed's own examples: Jane Doe, the Off-topic channel, one message.
enum SampleData {
    static func load(into replica: Replica<DefaultChatCustom>) async throws -> Int {
        let decoder = JSONDecoder()
        let user = try decoder.decode(ChatUser<FlatCustom>.self, from: Data(userJSON.utf8))
        let channel = try decoder.decode(ChatChannel<FlatCustom>.self, from: Data(channelJSON.utf8))
        let payload = try decoder.decode(MessagePayload<FlatCustom>.self, from: Data(messageJSON.utf8))
        let message = try ChatMessage(payload: payload, channelId: channel.id, userId: user.id, timetoken: 16_521_940_800_000_000)
        let member = ChatMember<DefaultChatCustom>(
            channel: channel, user: user, status: "active", updated: user.updated, eTag: "AZO/t53al7m8fw")
        return try await replica.load(users: [user], channels: [channel], members: [member], messages: [message])
    }

    static let userJSON = """
        {"id":"some-user-id","name":"Jane Doe","email":"jane.doe@example.com","externalId":"some-external-user-id",
         "profileUrl":"https://randomuser.me/api/portraits/men/1.jpg","custom":{"description":"Office Assistant"},
         "eTag":"AYGyoY3gre71eA","updated":"2020-09-23T09:23:34.598494Z"}
        """
    static let channelJSON = """
        {"id":"some-channel-id","name":"Off-topic","description":"Off-topic channel for random chatter and fun",
         "custom":{"profileUrl":"https://www.gravatar.com/avatar/149e60f311749f2a7c6515f7b34?s=256&d=identicon"},
         "eTag":"AbOx6N+6vu3zoAE","updated":"2020-09-23T09:23:37.175764Z"}
        """
    static let messageJSON = """
        {"id":"6da72b98-e211-4724-aad4-e0fb9f08999f","text":"Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
         "contentType":"none","content":{},"custom":{},"createdAt":"2022-05-10T14:48:00.000Z"}
        """
}

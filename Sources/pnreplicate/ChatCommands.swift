import ArgumentParser
import Foundation
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate edit`: a message's new text (the Chat SDK's `edited` action).
struct EditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Edit a stored message's text (works offline; an unsent message is rewritten, a sent one gets an `edited` action).")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The message's id.") var message: String
    @Option(name: .long, help: "The new text.") var text: String

    func run() async throws {
        try await runReportingErrors {
            let receipt = try await Session(store: options, connection: connection, existing: true).outbox.edit(message: message, text: text)
            try EnqueueOutput(receipt, id: message).print(json: options.json)
        }
    }
}

/// `pnreplicate delete`: a soft delete (the Chat SDK's `deleted` action).
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Soft-delete a stored message (hidden from queries, restorable), or with --hard delete it from history; an unsent message is withdrawn.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The message's id.") var message: String
    @Flag(name: .long, help: "Delete it from PubNub's history and the store (needs Delete-From-History on the keyset).") var hard = false

    func run() async throws {
        try await runReportingErrors {
            let receipt = try await Session(store: options, connection: connection, existing: true).outbox.deleteMessage(id: message, hard: hard)
            try EnqueueOutput(receipt, id: message).print(json: options.json)
        }
    }
}

/// `pnreplicate restore`: undoes the user's soft delete.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Restore a message this user soft-deleted.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The message's id.") var message: String

    func run() async throws {
        try await runReportingErrors {
            let receipt = try await Session(store: options, connection: connection, existing: true).outbox.restoreMessage(id: message)
            try EnqueueOutput(receipt, id: message).print(json: options.json)
        }
    }
}

/// `pnreplicate read`: the user's read position in a channel.
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Mark a channel read up to a timetoken (default: its newest stored message); sent with a receipt signal.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The channel.") var channel: String
    @Option(name: .customLong("up-to"), help: "The newest message read, a timetoken (at most the present plus 10 minutes).") var upTo: String?
    @Flag(name: .long, help: "Move the read position even backwards (repairs one set too far).") var force = false

    func run() async throws {
        try await runReportingErrors {
            let session = try await Session(store: options, connection: connection, existing: true)
            let timetoken: Timetoken
            if let upTo {
                guard let parsed = try? Timetoken(parsing: upTo) else { throw ValidationError("--up-to must be a timetoken") }
                timetoken = parsed
            } else {
                let messages = try await session.store.fetch(session.store.queries.messages(inChannel: channel))
                guard let newest = messages.compactMap(\.timetoken).max() else {
                    throw ValidationError("no sent message of \(channel) in the store; give --up-to")
                }
                timetoken = newest
            }
            let receipt = try await session.outbox.markRead(channel: channel, upTo: timetoken, force: force)
            try EnqueueOutput(receipt, id: nil).print(json: options.json)
        }
    }
}

/// `pnreplicate unread`: unread counts from the store.
struct UnreadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unread", abstract: "Unread counts of the user's channels, from the store (reads only).")
    @OptionGroup var options: StoreOptionsGroup
    @Option(name: .long, help: "The user (default: $PUBNUB_USER_ID, else pnreplicate-cli).") var user: String?
    @Option(name: .long, help: "Only this channel.") var channel: String?

    func run() async throws {
        try await runReportingErrors {
            let store = try options.openForReading()
            let user = actingUser(self.user)
            var counts = try await store.fetch(store.queries.unreadCounts(for: user))
            if let channel { counts = counts.filter { $0.key == channel } }
            if options.json { return try Output.json(counts) }
            if counts.isEmpty { Output.standardOutput("no memberships of \(user) in the store\n"); return }
            Output.table(counts.sorted { $0.key < $1.key }.map { ($0.key, String($0.value)) })
        }
    }
}

/// `pnreplicate pin` / `unpin`: the channel's pinned message.
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin", abstract: "Pin a sent message in its channel (or --channel), in the channel's custom data.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The message's id.") var message: String
    @Option(name: .long, help: "The channel to pin it in (default: the message's).") var channel: String?

    func run() async throws {
        try await runReportingErrors {
            let receipt = try await Session(store: options, connection: connection, existing: true).outbox.pinMessage(id: message, in: channel)
            try EnqueueOutput(receipt, id: nil).print(json: options.json)
        }
    }
}

/// `pnreplicate unpin`.
struct UnpinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unpin", abstract: "Unpin a channel's pinned message.")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions
    @Option(name: .long, help: "The channel.") var channel: String

    func run() async throws {
        try await runReportingErrors {
            let receipt = try await Session(store: options, connection: connection, existing: true).outbox.unpinMessage(in: channel)
            try EnqueueOutput(receipt, id: nil).print(json: options.json)
        }
    }
}

/// `pnreplicate decrypt-pending`: reads again the messages stored undecryptable.
struct DecryptPendingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt-pending",
        abstract: "Decrypt the stored messages that could not be decrypted before (give the right --cipher-key).")
    @OptionGroup var options: StoreOptionsGroup
    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        try await runReportingErrors {
            guard try connection.crypto() != nil else { throw ValidationError("decrypt-pending needs --cipher-key or $PUBNUB_CIPHER_KEY") }
            let report = try await Session(store: options, connection: connection, existing: true).reconciler.decryptPending()
            if options.json { return try Output.json(report) }
            Output.table([("decrypted", String(report.decrypted)), ("still undecryptable", String(report.stillUndecryptable))])
        }
    }
}

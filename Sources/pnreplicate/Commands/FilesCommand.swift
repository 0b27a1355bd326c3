import ArgumentParser
import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore
import Replicator

/// `pnreplicate files`: a channel's files on PubNub, on demand (no sync lists them).
struct FilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "files",
        abstract: "List, download or delete a channel's files on PubNub (send them with `send --file`).",
        subcommands: [List.self, Get.self, Delete.self])

    /// `files list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the files stored on a channel, oldest first (every page).")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @Option(name: .long, help: "The channel.") var channel: String

        func run() async throws {
            try await runReportingErrors {
                let session = try await Session(store: options, connection: connection)
                var files: [RemoteFile] = [], next: String?
                repeat {
                    let page = try await session.reconciler.client.files.listFiles(channel: channel, next: next)
                    files += page.files
                    next = page.next
                } while next != nil
                if options.json { return try Output.json(files) }
                // Ids, names and times as a peer and the server wrote them: printed terminal-safe.
                Output.columns(
                    ["ID", "SIZE", "CREATED", "NAME"], files.map { [$0.id, String($0.size), $0.created ?? "-", $0.name] },
                    empty: "no files on \(Output.terminalSafe(channel))")
            }
        }
    }

    /// `files get`.
    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download a file (decrypted with the cipher key), through the store's cache.")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @Option(name: .long, help: "The channel.") var channel: String
        @Option(name: .long, help: "The file id.") var id: String
        @Option(name: .long, help: "The file name (when omitted: as the first stored message naming the file names it).") var name: String?
        @Option(name: .long, help: "Where to write the bytes (default: standard output).") var output: String?

        func validate() throws { try FilesCommand.validate(id: id, name: name) }

        func run() async throws {
            try await runReportingErrors {
                let session = try await Session(store: options, connection: connection)
                let fileName = try await FilesCommand.name(given: name, id: id, channel: channel, store: session.store)
                let cache = FileCache(store: session.store, client: session.reconciler.client)
                let data = try await cache.data(of: ChatFile(id: id, name: fileName), channel: channel)
                if let output {
                    try data.write(to: URL(fileURLWithPath: output), options: .atomic)
                    if options.json { try Output.json(["id": id, "name": fileName, "bytes": "\(data.count)", "output": output]) }
                } else {
                    FileHandle.standardOutput.write(data)
                }
            }
        }
    }

    /// `files delete`.
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a file from the channel's storage on PubNub (its messages stay).")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var connection: ConnectionOptions
        @Option(name: .long, help: "The channel.") var channel: String
        @Option(name: .long, help: "The file id.") var id: String
        @Option(name: .long, help: "The file name (when omitted: as the first stored message naming the file names it).") var name: String?

        func validate() throws { try FilesCommand.validate(id: id, name: name) }

        func run() async throws {
            try await runReportingErrors {
                let session = try await Session(store: options, connection: connection)
                let fileName = try await FilesCommand.name(given: name, id: id, channel: channel, store: session.store)
                // Deleted from PubNub and from this store's cache.
                try await FileCache(store: session.store, client: session.reconciler.client).deleteFile(id: id, name: fileName, channel: channel)
                if options.json { return try Output.json(["id": id, "name": fileName, "deleted": "true"]) }
                print(Output.terminalSafe("deleted \(fileName) (\(id)) from \(channel)"))
            }
        }
    }

    /// The name given, else the name the first stored message of `channel` naming the file `id`
    /// gives it (the message it was uploaded for; a later copy may name it otherwise).
    static func name(given: String?, id: String, channel: String, store: ChatStore<DefaultChatCustom>) async throws -> String {
        if let given { return given }
        if let file = try await store.fetch(store.queries.file(id: id, inChannel: channel)) { return file.name }
        throw ValidationError("no stored message of \(Output.terminalSafe(channel)) names file \(Output.terminalSafe(id)); give --name")
    }

    /// `--id` and `--name` as a request may carry them (`..`, a `/` or a control character refused).
    static func validate(id: String, name: String?) throws {
        do {
            try Validation.validateFileId(id, field: "--id")
            if let name { try Validation.validateFileName(name, own: false, field: "--name") }
        } catch {
            throw ValidationError("\(error)")
        }
    }
}

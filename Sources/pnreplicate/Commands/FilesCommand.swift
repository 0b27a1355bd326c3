import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate files`: a channel's files on PubNub, on demand (no sync lists them).
struct FilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "files",
        abstract: "List, download or delete a channel's files on PubNub (send them with `send --file`).",
        subcommands: [List.self, Get.self, Delete.self])

    /// `files list`.
    struct List: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "List the files stored on a channel, oldest first (every page).")
        @OptionGroup var options: SessionOptions
        @Option(name: .long, help: "The channel.") var channel: String

        func perform() async throws {
            let replica = try await Session(options).replica
            var files: [RemoteFile] = [], next: String?
            repeat {
                let page = try await replica.files.list(channel: channel, next: next)
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

    /// `files get`.
    struct Get: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download a file (decrypted with the cipher key), through the store's cache.")
        @OptionGroup var options: SessionOptions
        @Option(name: .long, help: "The channel.") var channel: String
        @Option(name: .long, help: "The file id.") var id: String
        @Option(name: .long, help: "The file name (when omitted: as the first stored message naming the file names it).") var name: String?
        @Option(name: .long, help: "Where to write the bytes (default: standard output).") var output: String?

        func validate() throws { try FilesCommand.validate(id: id, name: name) }

        func perform() async throws {
            let replica = try await Session(options).replica
            // With the stored message's size, when it gives one: other bytes are refused.
            let file = try await FilesCommand.file(given: name, id: id, channel: channel, replica: replica)
            let data = try await replica.files.data(of: file, channel: channel)
            if let output {
                try data.write(to: URL(fileURLWithPath: output), options: .atomic)
                if options.json { try Output.json(["id": id, "name": file.name, "bytes": "\(data.count)", "output": output]) }
            } else {
                FileHandle.standardOutput.write(data)
            }
        }
    }

    /// `files delete`.
    struct Delete: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a file from the channel's storage on PubNub (its messages stay).")
        @OptionGroup var options: SessionOptions
        @Option(name: .long, help: "The channel.") var channel: String
        @Option(name: .long, help: "The file id.") var id: String
        @Option(name: .long, help: "The file name (when omitted: as the first stored message naming the file names it).") var name: String?

        func validate() throws { try FilesCommand.validate(id: id, name: name) }

        func perform() async throws {
            let replica = try await Session(options).replica
            let file = try await FilesCommand.file(given: name, id: id, channel: channel, replica: replica)
            // Deleted from PubNub and from this store's cache.
            try await replica.files.delete(id: id, name: file.name, channel: channel)
            if options.json { return try Output.json(["id": id, "name": file.name, "deleted": "true"]) }
            print("deleted \(Output.safeCell(file.name)) (\(Output.safeCell(id))) from \(Output.safeCell(channel))")
        }
    }

    /// The file `id` as the first stored message of `channel` naming it gives it (the message it
    /// was uploaded for; a later copy may name it otherwise), with its size when the message gives
    /// one; with `given`, that name (and the stored size when that message names it so).
    static func file(given: String?, id: String, channel: String, replica: Replica<DefaultChatCustom>) async throws -> ChatFile {
        let stored = try await replica.fetch(replica.queries.file(id: id, inChannel: channel))
        if let given { return ChatFile(id: id, name: given, size: stored?.name == given ? stored?.size : nil) }
        if var stored {
            stored.id = id
            return stored
        }
        throw ValidationError("no stored message of \(Output.safeCell(channel)) names file \(Output.safeCell(id)); give --name")
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

import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate draft`: the message drafts kept in the store (one per channel, and per thread).
struct DraftCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "draft",
        abstract: "Show, edit and list the message drafts kept in the store.",
        discussion: """
            A draft is saved in the store with each change, so it survives a restart or a crash \
            (at most the edit in progress is lost). Offsets and lengths count UTF-16 code units, \
            as the PubNub Chat SDK does. `draft show` prints the text it would send; `draft send` \
            queues it in the outbox (with a mention event per mentioned user) and deletes the draft \
            in one transaction; `pnreplicate sync` sends it.
            """,
        subcommands: [Show.self, Set.self, Mention.self, Quote.self, Attach.self, Detach.self, Clear.self, Send.self, List.self])

    /// The draft a command works on.
    struct Target: ParsableArguments {
        @Option(name: .customLong("channel"), help: "The channel.") var channel: String
        @Option(name: .customLong("thread"), help: "The thread's root message timetoken (a thread's draft).") var thread: String?

        func validate() throws {
            try validateIdentifiers([channel], flag: "--channel")
            _ = try key()
        }

        func key() throws -> DraftKey {
            guard let thread else { return DraftKey(channelId: channel) }
            guard let timetoken = try? Timetoken(parsing: thread), timetoken.rawValue > 0 else {
                throw ValidationError("--thread must be a message timetoken (17 digits)")
            }
            return DraftKey(channelId: channel, threadRoot: timetoken)
        }
    }

    /// Opens the store for writing (created and migrated when needed), on a replica that sends
    /// nothing: drafts live in the store only.
    static func open(_ options: StoreOptionsGroup) throws -> Replica<DefaultChatCustom> {
        var configuration = ReplicaConfiguration(publishKey: "demo", subscribeKey: "demo", userId: actingUser(nil), store: .file(options.storePath))
        configuration.storeOptions = options.storeOptions(migration: .automatic)
        return try Replica<DefaultChatCustom>(configuration)
    }

    /// Prints a draft: text, mentions, quote and the text it would send; or JSON.
    static func print(_ draft: MessageDraft?, key: DraftKey, json: Bool) throws {
        let draft = draft ?? MessageDraft()
        if json { return try Output.json(DraftOutput(key: key, draft: draft)) }
        var lines = ["draft of \(key): \(draft.isEmpty ? "(empty)" : "\"\(draft.text)\"")"]
        for mention in draft.mentions {
            lines.append("  mention \(mention.offset)+\(mention.length) -> \(mention.target)")
        }
        if let quote = draft.quotedMessage { lines.append("  quotes \(quote.timetoken) by \(quote.userId)") }
        for file in draft.files { lines.append("  file \(file.name) (\(file.size) bytes, \(file.mimeType))") }
        if !draft.isEmpty { lines.append("  sends: \(draft.render())") }
        Output.standardOutput(Output.terminalSafe(lines.joined(separator: "\n")) + "\n")
    }

    struct Show: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Print a draft (reads the store only).")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var target: Target

        func perform() async throws {
            let store = try options.openForReading()
            let key = try target.key()
            try DraftCommand.print(try await store.fetch(store.queries.draft(key)), key: key, json: options.json)
        }
    }

    struct Set: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a draft's text TEXT (mentions whose text is untouched are kept, as the Chat SDK's update).")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var target: Target
        @Option(name: .long, help: "The new text.") var text: String

        func perform() async throws {
            let key = try target.key()
            let text = self.text
            let draft = try await DraftCommand.open(options).drafts.edit(key) { $0.update(text: text) }
            try DraftCommand.print(draft, key: key, json: options.json)
        }
    }

    struct Mention: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Link LENGTH code units from OFFSET to a user, a channel or a URL (refused when it overlaps another mention).")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var target: Target
        @Option(name: .long, help: "Where the mention starts (UTF-16 code units).") var offset: Int
        @Option(name: .long, help: "How long it is (UTF-16 code units).") var length: Int
        @Option(name: .long, help: "Mention this user id.") var user: String?
        @Option(name: .customLong("to-channel"), help: "Reference this channel id.") var toChannel: String?
        @Option(name: .long, help: "Link to this URL.") var url: String?

        func validate() throws {
            guard [user, toChannel, url].compactMap({ $0 }).count == 1 else {
                throw ValidationError("give exactly one of --user, --to-channel, --url")
            }
        }

        func perform() async throws {
            let key = try target.key()
            let mentionTarget: MentionTarget = user.map { .user($0) } ?? toChannel.map { .channel($0) } ?? .url(url ?? "")
            let (offset, length) = (self.offset, self.length)
            let draft = try await DraftCommand.open(options).drafts.edit(key) {
                try $0.addMention(offset: offset, length: length, target: mentionTarget)
            }
            try DraftCommand.print(draft, key: key, json: options.json)
        }
    }

    struct Quote: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Quote a stored message of the draft's channel (sent in meta.quotedMessage), or with --remove, drop the quote.")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var target: Target
        @Option(name: .long, help: "The quoted message's id (it must be stored and sent).") var message: String?
        @Flag(name: .long, help: "Drop the draft's quote.") var remove = false

        func validate() throws {
            guard (message != nil) != remove else { throw ValidationError("give --message ID or --remove") }
        }

        func perform() async throws {
            let key = try target.key()
            let store = try DraftCommand.open(options)
            var quote: QuotedMessage?
            if let message {
                guard let quoted = try await store.fetch(store.queries.message(id: message)) else {
                    throw OutboxError.messageNotFound(message)
                }
                guard quoted.channelId == key.channelId, let timetoken = quoted.timetoken else {
                    throw ValidationError("only a sent message of \(key.channelId) can be quoted (as in the Chat SDK)")
                }
                quote = QuotedMessage(timetoken: timetoken, text: quoted.text, userId: quoted.userId)
            }
            let draft = try await store.drafts.edit(key) { [quote] in $0.quotedMessage = quote }
            try DraftCommand.print(draft, key: key, json: options.json)
        }
    }

    struct Send: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue the draft's message and its mention events in the outbox, and delete the draft (works offline).")
        @OptionGroup var options: SessionOptions
        @OptionGroup var target: Target
        @Option(name: .long, help: "Publish meta, a JSON object.") var meta: String?

        func perform() async throws {
            let key = try target.key()
            let session = try await Session(options)
            let meta = try self.meta.map { try JSONValue(jsonData: Data($0.utf8)) }
            let receipt = try await session.replica.messages.send(draft: key, meta: meta)
            let output = DraftSendOutput(receipt)
            if options.json { return try Output.json(output) }
            var rows = [("id", output.id ?? "-"), ("op", output.opId ?? "-"), ("text", output.text ?? "")]
            for op in output.mentionOps { rows.append(("mention op", op)) }
            if let root = output.threadRootOp { rows.append(("thread root op", root)) }
            Output.table(rows)
        }
    }

    /// `draft attach`.
    struct Attach: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Attach a file to the draft: copied into the store now, uploaded when the draft is sent (5 MiB at most).")
        @OptionGroup var options: SessionOptions
        @OptionGroup var target: Target
        @Option(name: .long, help: "The file.") var file: String
        @Option(name: .long, help: "The name it is sent under (default: the file's).") var name: String?

        func perform() async throws {
            let key = try target.key()
            let session = try await Session(options)
            let draft = try await session.replica.drafts.attach(OutgoingFile(url: URL(fileURLWithPath: file), name: name), toDraft: key)
            try DraftCommand.print(draft, key: key, json: options.json)
        }
    }

    /// `draft detach`.
    struct Detach: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a file (or, without --name, every file) from the draft.")
        @OptionGroup var options: SessionOptions
        @OptionGroup var target: Target
        @Option(name: .long, help: "The file's name in the draft.") var name: String?

        func perform() async throws {
            let key = try target.key()
            let session = try await Session(options, existing: true)
            let draft = try await session.replica.drafts.detach(fileNamed: name, fromDraft: key)
            try DraftCommand.print(draft, key: key, json: options.json)
        }
    }

    struct Clear: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a draft.")
        @OptionGroup var options: StoreOptionsGroup
        @OptionGroup var target: Target

        func perform() async throws {
            let key = try target.key()
            try options.requireExistingStore()
            let removed = try await DraftCommand.open(options).drafts.remove(key)
            if options.json { return try Output.json(["draft": key.description, "removed": removed ? "yes" : "no"]) }
            Output.standardOutput(removed ? "draft of \(key) removed\n" : "no draft of \(key)\n")
        }
    }

    struct List: ReportingCommand {
        static let configuration = CommandConfiguration(abstract: "Every draft, most recently changed first (reads the store only).")
        @OptionGroup var options: StoreOptionsGroup

        func perform() async throws {
            let store = try options.openForReading()
            let drafts = try await store.fetch(store.queries.drafts())
            if options.json { return try Output.json(drafts.map { DraftOutput(key: $0.key, draft: $0.draft) }) }
            if drafts.isEmpty { Output.standardOutput("no drafts\n"); return }
            for stored in drafts {
                Output.standardOutput(
                    Output.terminalSafe("\(stored.key)  \(stored.draft.mentions.count) mention(s)  \"\(stored.draft.text)\"") + "\n")
            }
        }
    }
}

/// What `draft ... --json` prints.
struct DraftOutput: Encodable {
    var key: DraftKey
    var draft: MessageDraft
    /// The text the draft would be sent as.
    var rendered: String
    var elements: [MessageElement]

    init(key: DraftKey, draft: MessageDraft) {
        self.key = key
        self.draft = draft
        rendered = draft.render()
        elements = draft.elements
    }
}

/// What `draft send` prints.
struct DraftSendOutput: Encodable {
    var id: String?
    var opId: String?
    var text: String?
    var mentionOps: [String]
    var threadRootOp: String?

    init(_ receipt: DraftSendReceipt<ChatMessage<DefaultChatCustom.Message>>) {
        id = receipt.message.value?.id
        opId = receipt.message.opId
        text = receipt.message.value?.text
        mentionOps = receipt.mentionOpIds
        threadRootOp = receipt.threadRootOpId
    }
}

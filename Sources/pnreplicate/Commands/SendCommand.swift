import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate send`.
struct SendCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Store a message and queue its publish (works offline; `pnreplicate sync` sends it).")

    @OptionGroup var options: SessionOptions
    @Option(name: .long, help: "The channel.") var channel: String
    @Option(name: .long, help: "The message text (optional with --file).") var text: String?
    @Option(name: .customLong("file"), help: ArgumentHelp(
        "A file to send with the message (repeatable; uploaded when the store syncs, exactly once; 5 MiB at most).",
        discussion: "One file is sent as a file message (the core SDKs' shape); several, or --chat-shape, as the Chat SDK's text message listing its files."))
    var files: [String] = []
    @Flag(name: .customLong("chat-shape"), help: "Send the file(s) in the Chat SDK's shape: store=0 file events, then a text message listing them.")
    var chatShape = false
    @Option(name: .long, help: "Publish meta, a JSON object.") var meta: String?
    @Option(name: .customLong("custom-message-type"), help: "PubNub's custom_message_type: 3-50 characters of A-Z a-z 0-9 - _.")
    var customMessageType: String?
    @Option(name: .long, help: "Queue this many copies, numbered \"TEXT 1\", \"TEXT 2\", ... (one transaction per 2,500).") var count: Int?
    /// Copies of `--count` queued per transaction. The next batch is prepared while one is
    /// written, so two are in memory: 2,500 ran as fast as 10,000 (the ids are time-ordered, so a
    /// batch appends to the indexes) and peaked at 119 MB for 100,000 copies, not 193 MB
    /// (`docs/performance.md`). Hidden: tests make batches small.
    @Option(name: .long, help: .hidden) var batchSize = 2_500

    func perform() async throws {
        let session = try await Session(options)
        let meta = try self.meta.map { try JSONValue(jsonData: Data($0.utf8)) }
        guard (count ?? 1) > 0 else { throw ValidationError("--count must be positive") }
        guard batchSize > 0 else { throw ValidationError("--batch-size must be positive") }
        var outputs: [EnqueueOutput] = []
        if !files.isEmpty {
            guard count == nil else { throw ValidationError("--count cannot be combined with --file") }
            let outgoing = files.map { OutgoingFile(url: URL(fileURLWithPath: $0)) }
            let shape: FileShape = chatShape || files.count > 1 ? .chatText : .fileMessage
            let receipt = try await session.replica.messages.send(
                files: outgoing, text: text ?? "", to: channel, shape: shape, meta: meta, customMessageType: customMessageType)
            return try EnqueueOutput(receipt, id: receipt.value?.id).print(json: options.json)
        }
        guard let text else { throw ValidationError("give --text, --file, or both") }
        if let count {
            // One transaction per 2,500 (`Outbox.send(many:)`): a kill keeps whole batches. The
            // next batch is prepared (bodies, checks, op payloads) while this one is written.
            let messages = session.replica.messages, text = text, channel = channel, customMessageType = customMessageType
            let starts = Array(stride(from: 1, through: count, by: batchSize)), batchSize = batchSize
            let prepare = { @Sendable (start: Int) in
                Task {
                    try await messages.prepare(many: (start...min(count, start + batchSize - 1)).map {
                        OutgoingMessage<FlatCustom>(text: "\(text) \($0)", to: channel, meta: meta, customMessageType: customMessageType)
                    })
                }
            }
            var next = prepare(starts[0])
            for index in starts.indices {
                let prepared = try await next.value
                if index + 1 < starts.count { next = prepare(starts[index + 1]) }
                outputs += try await messages.send(prepared: prepared).map { EnqueueOutput($0, id: $0.value?.id) }
            }
        } else {
            let receipt = try await session.replica.messages.send(text: text, to: channel, meta: meta, customMessageType: customMessageType)
            outputs.append(EnqueueOutput(receipt, id: receipt.value?.id))
        }
        if options.json, count != nil { return try Output.json(outputs) }
        if count != nil, outputs.count > 1 {
            // Many copies: what was queued, not a table each (`--json` lists every one).
            return Output.table([
                ("queued", "\(outputs.count) messages to \(channel)"), ("first", outputs.first?.id ?? "-"),
                ("last", outputs.last?.id ?? "-"),
            ])
        }
        for output in outputs { try output.print(json: options.json) }
    }
}

import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// A file to send: its bytes (or where to read them) and how it is named.
public struct OutgoingFile: Sendable, Hashable {
    /// Where the bytes come from.
    public enum Source: Sendable, Hashable {
        /// A file on disk, read once when the send is queued (the copy is the store's).
        case file(URL)
        /// Bytes in memory.
        case data(Data)
    }

    /// The bytes.
    public var source: Source
    /// The name it is published under (default: the file's own name).
    public var name: String
    /// Its MIME type (default: guessed from the name's extension).
    public var mimeType: String

    /// A file from disk.
    ///
    /// ```swift
    /// try await outbox.messages.send(files: [OutgoingFile(url: photo)], text: "look", to: "general")
    /// ```
    public init(url: URL, name: String? = nil, mimeType: String? = nil) {
        source = .file(url)
        self.name = name ?? url.lastPathComponent
        self.mimeType = mimeType ?? ChatFile.mimeType(forName: self.name)
    }

    /// Bytes in memory.
    public init(data: Data, name: String, mimeType: String? = nil) {
        source = .data(data)
        self.name = name
        self.mimeType = mimeType ?? ChatFile.mimeType(forName: name)
    }
}

// Sending files (docs/files.md, "The send's steps"). A send with files is one `send` op: its
// bytes are copied into the store's attachment area before the op is queued; an attempt first
// runs the upload steps its `file_uploads` rows have not finished (generate an upload URL,
// recorded before the upload; the presigned upload; for the Chat SDK's shape, the `store=0` file
// event, marked before it goes, so at most once), then publishes the message that carries the
// exactly-once guarantee, probed like any publish when its outcome is unknown. An upload whose
// outcome is unknown is never trusted: it is redone under a new id and the old id becomes an
// orphan, deleted from PubNub after the drain.
extension OutboxAttempt {
    // MARK: The upload steps

    /// Runs the steps a send with files has not finished and gives the request its files; false
    /// when a step failed (the op was rescheduled or parked).
    func uploadFiles(_ entry: OutboxEntry, shape: FileShape, resolved: inout OutboxRequests.Resolved, on outbox: isolated Outbox<Custom>) async throws -> Bool {
        let files = outbox.client.files
        var rows = try await outbox.store.reading { try $0.files.fileUploads(opId: entry.id) }
        guard !rows.isEmpty else {
            await park(entry, .dead, OutboxFailure(errorClass: .other, message: "the send's files are missing from the store"), on: outbox)
            return false
        }
        for index in rows.indices where !rows[index].uploaded {
            var row = rows[index]
            guard let plaintext = try outbox.store.attachments.read(row.localName, in: .outgoing) else {
                await park(entry, .dead, OutboxFailure(errorClass: .other, message: "the bytes of \(row.name) are gone from the attachment area"), on: outbox)
                return false
            }
            do {
                let bytes = try files.uploadBytes(for: plaintext)
                // An earlier upload of this file whose outcome is unknown is never reused: it
                // becomes an orphan, deleted after the drain, and the file goes under a new id.
                let orphan = row.fileId.map { FileOrphan(channelId: row.channelId, fileId: $0, name: row.uploadName ?? row.name) }
                outbox.drainState.report.attempts += 1
                let ticket = try await files.generateUploadURL(channel: row.channelId, name: row.name)
                row.fileId = ticket.id
                row.uploadName = ticket.name
                row.expiresAt = ticket.expiration
                let started = row
                try await outbox.store.transaction { tx in
                    if let orphan { try tx.files.addFileOrphan(orphan) }
                    try tx.files.updateFileUpload(started)
                }
                outbox.drainState.report.attempts += 1
                try await files.upload(ticket, bytes: bytes, contentType: row.mimeType)
                row.uploaded = true
                let done = row
                try await outbox.store.transaction { try $0.files.updateFileUpload(done) }
                rows[index] = row
            } catch let error as WireError {
                await recordFileStepFailure(entry, error, on: outbox)
                return false
            }
        }
        if shape == .chatText {
            for index in rows.indices where !rows[index].eventSent {
                // The Chat SDK's `store=0` file event: marked first, so it is sent at most once.
                rows[index].eventSent = true
                let row = rows[index]
                try await outbox.store.transaction { try $0.files.updateFileUpload(row) }
                do {
                    outbox.drainState.report.attempts += 1
                    _ = try await files.publishFile(PublishFileRequest(
                        channel: row.channelId, fileId: row.fileId ?? "", fileName: row.uploadName ?? row.name, size: row.size,
                        mimeType: row.mimeType, store: false))
                } catch {
                    outbox.logger.info("a file event (store=0, at most once) was not delivered", metadata: ["op": "\(entry.id)", "error": "\(error)"])
                }
            }
        }
        let shown = rows.map { row in
            row.chatFile(url: files.fileURL(channel: row.channelId, id: row.fileId ?? "", name: row.uploadName ?? row.name))
        }
        resolved.files = shown
        // Written on every attempt, not only one that ran a step: a kill after the last upload's
        // commit and before this write must not leave the sent message without its files' ids.
        if let messageId = entry.operation.messageId {
            try await outbox.store.transaction { try $0.files.setMessageFiles(messageId: messageId, shown) }
        }
        return true
    }

    /// A failed upload step: an expired or refused upload form is redone at once under a new id;
    /// anything else follows the outbox's rules, except that no upload step makes the send
    /// ambiguous (nothing was published yet).
    private func recordFileStepFailure(_ entry: OutboxEntry, _ error: WireError, on outbox: isolated Outbox<Custom>) async {
        switch FailureDecision.classifyFileStep(
            error, serverFailures: entry.serverFailures, limit: outbox.options.maxServerFailures,
            waitedUnder: entry.waitedUnderToken)
        {
        case .waitForToken(_, let failure):
            await waitForToken(entry, state: .pending, failure: failure, on: outbox)
        case .retry(let state, let minimumWait, let failure, let serverFailure):
            await reschedule(entry, state: state, minimumWait: minimumWait, failure: failure, serverFailure: serverFailure, on: outbox)
        case .dead(let failure), .conflict(let failure):
            await park(entry, .dead, failure, on: outbox)
        case .done:
            await reschedule(entry, state: .pending, minimumWait: 0, failure: OutboxFailure(errorClass: .other, message: "\(error)"), serverFailure: false, on: outbox)
        }
    }

    // MARK: Orphans and the area

    /// How many times one drain tries to delete an orphaned upload.
    static var orphanDeleteAttempts: Int { 5 }

    /// Deletes the files no message will reference from PubNub (best effort: what fails is tried
    /// after the next drain), and once per outbox removes area files no row names.
    func cleanUpFiles(on outbox: isolated Outbox<Custom>) async {
        if !outbox.drainState.sweptAttachments {
            outbox.drainState.sweptAttachments = true
            if let keep = try? await outbox.store.reading({ tx in (try tx.files.outgoingFileNames(), try tx.files.cachedFileNames()) }),
               let drafts = try? await outbox.store.fetch(outbox.store.queries.drafts())
            {
                // Drafts' files wait in `outgoing` until the draft is sent or they are detached.
                let all = keep.0.union(keep.1).union(drafts.flatMap { $0.draft.files.map(\.localName) })
                outbox.store.attachments.sweep(keeping: [.outgoing: all, .cache: all])
            }
        }
        guard let orphans = try? await outbox.store.reading({ try $0.files.fileOrphans() }), !orphans.isEmpty else { return }
        var listings: [String: FileOwnership.Listing] = [:]
        for orphan in orphans {
            // A few tries, backing off as the outbox does: an orphan left is tried after the next drain.
            for attempt in 1...Self.orphanDeleteAttempts {
                // Whether the file is gone from PubNub (then it leaves the cache too).
                var gone = true
                do {
                    switch try await FileOwnership.confirm(orphan, client: outbox.client, listings: &listings) {
                    case .delete:
                        try await outbox.client.files.deleteFile(channel: orphan.channelId, id: orphan.fileId, name: orphan.name)
                    case .absent:
                        break
                    case .keep(let reason):
                        gone = false
                        outbox.logger.info("a hard-deleted message's file is left on PubNub: it is not the message's own", metadata: [
                            "channel": "\(orphan.channelId)", "file": "\(orphan.fileId)", "reason": "\(reason)"])
                    }
                } catch {
                    // A 404: never uploaded, or already gone. A permanent refusal is not retried now.
                    if case .service(let service) = error, service.status == 404 {
                        // Done.
                    } else if case .invalidArgument = error {
                        // An id or name no request may carry (an orphan recorded by an earlier
                        // version): it can never be deleted, so it stops taking a slot.
                        gone = false
                        outbox.logger.warning("a file to delete has an id or name no request may carry; it is forgotten", metadata: [
                            "channel": "\(orphan.channelId)", "error": "\(error)"])
                    } else if orphan.namedBefore != nil, error.retryability == .permanent {
                        // Not confirmed, and it cannot be: the file stays (it may be someone else's).
                        gone = false
                        outbox.logger.warning("a hard-deleted message's file is left on PubNub: its ownership cannot be confirmed", metadata: [
                            "channel": "\(orphan.channelId)", "file": "\(orphan.fileId)", "error": "\(error)"])
                    } else {
                        outbox.logger.debug("an orphaned upload could not be deleted yet", metadata: ["error": "\(error)"])
                        guard error.retryability.isRetryable, attempt < Self.orphanDeleteAttempts, !Task.isCancelled else { break }
                        let delay = outbox.options.retry.wait(afterAttempt: attempt, atLeast: error.retryability.minimumWait ?? 0, using: &outbox.random)
                        try? await outbox.clock.sleep(until: outbox.clock.now.addingTimeInterval(delay))
                        continue
                    }
                }
                let goneForGood = gone
                let evicted = try? await outbox.store.transaction { tx -> [String] in
                    try tx.files.removeFileOrphan(orphan)
                    guard goneForGood else { return [] }
                    try tx.files.forgetUpload(ofFile: orphan.fileId, channel: orphan.channelId)
                    return try tx.files.removeCachedFile(channel: orphan.channelId, id: orphan.fileId)
                }
                for name in evicted ?? [] {
                    outbox.store.attachments.remove(name, in: .cache)
                    outbox.store.attachments.remove(name, in: .outgoing)
                }
                break
            }
        }
        outbox.drainState.report.orphanedFiles = (try? await outbox.store.reading { try $0.files.fileOrphans().count }) ?? 0
    }
}

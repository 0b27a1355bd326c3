import Foundation
import PubNubWire
import ReplicaModel
import ReplicaStore

/// Whose files a hard delete deletes (`docs/files.md`, "Whose files a hard delete deletes"): the
/// one owner of that rule.
///
/// A message names its files by id and name, and anyone who may publish on a channel can publish
/// a message naming another user's file (nothing is uploaded for it), or forward one. Deleting
/// every file a hard-deleted message names, as the Chat SDK's `Message.delete()` does, would let
/// such a copy destroy the original's file, with the deleting user's grants. So a hard delete
/// deletes a file only when the message is the file's own:
///
/// 1. this device uploaded the file for this very message (its id and its timetoken, recorded in
///    `uploaded_files` when the send completed): deleted without asking; else
/// 2. no older stored message of the channel names the file, and then, before the delete, the
///    server confirms it (``confirm(_:client:listings:)``): the file is in the channel's listing,
///    the message was published within ``maxPublishDelay`` of the file's upload, and no message
///    of the channel's history between the upload and the deleted message names it. A forged copy
///    or a forward is never the first: the original is older; and a copy made after the original
///    was deleted (with `preserveFiles`, or by a client that keeps files) is too late.
///
/// Whatever cannot be confirmed (the listing or history too long to read, a message in the window
/// that cannot be read, a refusal) keeps the file: deleting another user's file cannot be undone,
/// leaving a file costs its storage.
enum FileOwnership {
    /// The listing pages read to find a file's upload time (100 files a page).
    static let maxListingPages = 20
    /// The history pages read between a file's upload and the deleted message (100 messages a page).
    static let maxHistoryPages = 20
    /// How long before the listing's `created` (a second's precision, another service's clock)
    /// the history window starts.
    static let uploadTimeMargin: TimeInterval = 60
    /// How long after a file's upload the message it was uploaded for is published at the latest,
    /// as far as another device can vouch: the SDKs publish right after the upload (its form
    /// expires in about a minute); this device's own late publishes are rule 1's.
    static let maxPublishDelay: TimeInterval = 3600

    /// The files of a hard-deleted message to delete after the drain (in the delete's transaction):
    /// this device's uploads for it, and those no older stored message of the channel names, to be
    /// confirmed by the server (``FileOrphan/namedBefore``). The files are read from the message
    /// as it was stored (the op's snapshot).
    static func orphans<Custom: ChatCustomData>(
        ofDeleted messageId: String, channel: String, timetoken: Timetoken, files: [ChatFile], tx: StoreTransaction<Custom>
    ) throws -> [FileOrphan] {
        var orphans: [FileOrphan] = []
        for file in files {
            guard let id = file.id, (try? Validation.validateFileId(id)) != nil,
                  (try? Validation.validateFileName(file.name, own: false)) != nil
            else { continue }
            if let upload = try tx.files.upload(ofFile: id, channel: channel), upload.messageId == messageId, upload.timetoken == timetoken {
                orphans.append(FileOrphan(channelId: channel, fileId: id, name: file.name))
                continue
            }
            // A stored older message naming it: this one is a copy or a forward.
            if let first = try tx.files.firstMessage(naming: id, channel: channel), let firstTimetoken = first.timetoken,
               firstTimetoken < timetoken
            {
                continue
            }
            orphans.append(FileOrphan(channelId: channel, fileId: id, name: file.name, namedBefore: timetoken))
        }
        return orphans
    }

    /// What the server says of a file to confirm.
    enum Verdict: Equatable, Sendable {
        /// The deleted message was the first to name it: delete it.
        case delete
        /// The channel holds no such file (never uploaded there, or already deleted): nothing to do.
        case absent
        /// Kept on PubNub: an older message names it, or it could not be confirmed (the reason).
        case keep(String)
    }

    /// What one cleanup pass has read of a channel's file listing (read once per channel per
    /// pass, however many orphans of that channel it confirms).
    struct Listing: Sendable {
        var files: [String: RemoteFile] = [:]
        var next: String?
        var pages = 0
        var complete = false
    }

    /// Asks the server whether the message at `orphan.namedBefore` was the first of its channel to
    /// name `orphan`'s file: reads the channel's file listing for the file's upload time (pages
    /// kept in `listings` for the pass), then the history from a little before that time up to
    /// the message. Throws what the requests throw (the caller keeps the orphan to try again, or
    /// gives up on a permanent refusal).
    static func confirm(
        _ orphan: FileOrphan, client: PubNubClient, listings: inout [String: Listing]
    ) async throws(WireError) -> Verdict {
        guard let deleted = orphan.namedBefore else { return .delete }
        var listing = listings[orphan.channelId] ?? Listing()
        while listing.files[orphan.fileId] == nil, !listing.complete, listing.pages < maxListingPages {
            let page = try await client.files.listFiles(channel: orphan.channelId, next: listing.next)
            listing.pages += 1
            for file in page.files { listing.files[file.id] = file }
            listing.next = page.next
            listing.complete = page.next == nil
            listings[orphan.channelId] = listing
        }
        guard let uploaded = listing.files[orphan.fileId] else {
            return listing.complete ? .absent : .keep("not among the channel's first \(listing.pages * FileLimits.maxListLimit) files")
        }
        guard let created = uploaded.created.flatMap({ try? ISOTimestamp(parsing: $0) })?.date else {
            return .keep("the listing gives no upload time")
        }
        guard let windowStart = try? Timetoken(date: created.addingTimeInterval(-uploadTimeMargin)),
              let latest = try? Timetoken(date: created.addingTimeInterval(maxPublishDelay))
        else {
            return .keep("the listing's upload time \(uploaded.created ?? "") is out of range")
        }
        // Published before the file existed, or long after it: not the message it was uploaded for.
        guard deleted > windowStart else { return .keep("the message is older than the file's upload") }
        guard deleted <= latest else { return .keep("the message came more than \(Int(maxPublishDelay)) s after the file's upload") }
        var before = deleted
        for _ in 0..<maxHistoryPages {
            guard before > windowStart else { return .delete }
            let page = try await client.history.fetchHistory(HistoryQuery(channels: [orphan.channelId], max: 100, start: before, end: windowStart))
            let messages = page.channels[orphan.channelId] ?? []
            for message in messages {
                switch files(of: message, crypto: client.crypto != nil) {
                case .unreadable: return .keep("a message at \(message.timetoken) since the upload cannot be read")
                case .files(let ids) where ids.contains(orphan.fileId): return .keep("an older message (\(message.timetoken)) names it")
                case .files: continue
                }
            }
            // Only an empty page ends the window: how the server fills a page between two bounds
            // is inferred (`pubnub-protocol.md`), and a delete cannot be undone.
            guard let oldest = messages.map(\.timetoken).min() else { return .delete }
            before = oldest
        }
        return .keep("more than \(maxHistoryPages) pages of messages since the upload")
    }

    private enum Named { case files(Set<String>), unreadable }

    /// The file ids a history message names, or `unreadable` when it could hide one: a payload
    /// that did not decrypt, a file message whose payload is not an object, or a string payload
    /// a client without a cipher key cannot tell from ciphertext.
    private static func files(of message: HistoryMessage, crypto: Bool) -> Named {
        if message.decryptionError != nil { return .unreadable }
        switch message.message {
        case .object:
            return .files(Set(ChatFile.split(payload: message.message, messageType: message.messageType).files.compactMap(\.id)))
        case .string where !crypto || message.messageType == ChatFile.fileMessageType:
            return .unreadable
        default:
            return message.messageType == ChatFile.fileMessageType ? .unreadable : .files([])
        }
    }
}

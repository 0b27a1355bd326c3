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
/// 1. this device uploaded the file for this very message (``ReplicaStore/StoreTransaction``'s
///    `uploaded_files`): deleted without asking; else
/// 2. no older stored message of the channel names the file, and then, before the delete, the
///    server confirms it (``confirm(_:client:)``): the file is in the channel's listing, and no
///    message of the channel's history between the file's upload and the deleted message names
///    it. A forged copy or a forward is never the first: the original is older.
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
            if try tx.uploadingMessage(ofFile: id, channel: channel) == messageId {
                orphans.append(FileOrphan(channelId: channel, fileId: id, name: file.name))
                continue
            }
            // A stored older message naming it: this one is a copy or a forward.
            if let first = try tx.firstMessage(naming: id, channel: channel), let firstTimetoken = first.timetoken,
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
        guard let windowStart = try? Timetoken(date: created.addingTimeInterval(-uploadTimeMargin)) else {
            return .keep("the listing's upload time \(uploaded.created ?? "") is out of range")
        }
        var before = deleted
        for _ in 0..<maxHistoryPages {
            guard before > windowStart else { return .delete }
            let page = try await client.fetchHistory(HistoryQuery(channels: [orphan.channelId], max: 100, start: before, end: windowStart))
            let messages = page.channels[orphan.channelId] ?? []
            for message in messages {
                switch files(of: message, crypto: client.crypto != nil) {
                case .unreadable: return .keep("a message at \(message.timetoken) since the upload cannot be read")
                case .files(let ids) where ids.contains(orphan.fileId): return .keep("an older message (\(message.timetoken)) names it")
                case .files: continue
                }
            }
            guard messages.count >= 100, let oldest = messages.map(\.timetoken).min() else { return .delete }
            before = oldest
        }
        return .keep("more than \(maxHistoryPages * 100) messages since the upload")
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

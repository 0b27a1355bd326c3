import ArgumentParser
import Foundation
import PubNubReplica
import ReplicaModel

/// `pnreplicate checkpoints`: where each pull has got to.
struct CheckpointsCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkpoints",
        abstract: "Show every pull checkpoint: history, reactions and object listings (reads the store only).",
        discussion: """
            applied: every message up to this timetoken is stored (reactions:, members: the last \
            listing's snapshot; they stay current past it while listen follows the channel). \
            fill top / fill cursor: a history catch-up still filling its gap, resumed by the next \
            sync; on a reactions: or members: row, fill top is the end of a gap no listing has \
            covered (sync --channel C lists C again). cursor: the newest `updated` of an object \
            listing.
            """)

    @OptionGroup var options: StoreOptionsGroup

    func perform() async throws {
        let store = try options.openForReading()
        let checkpoints = try await store.fetch(store.queries.checkpoints())
        if options.json { return try Output.json(checkpoints.map(CheckpointOutput.init)) }
        Output.columns(
            ["scope", "applied", "fill top", "fill cursor", "cursor", "updated at"],
            checkpoints.map { c in
                [
                    c.scope, Output.cell(c.applied), Output.cell(c.fillTop), Output.cell(c.fillCursor),
                    Output.cell(c.cursor), Output.time(c.updatedAt),
                ]
            },
            empty: "no checkpoints: nothing was pulled into this store yet")
    }
}

/// A checkpoint as `checkpoints --json` prints it: timetokens as strings, every key present.
struct CheckpointOutput: Encodable {
    var scope: String
    var applied: Timetoken?
    var fillTop: Timetoken?
    var fillCursor: Timetoken?
    var cursor: String?
    var updatedAt: String

    init(_ checkpoint: SyncCheckpoint) {
        scope = checkpoint.scope
        applied = checkpoint.applied
        fillTop = checkpoint.fillTop
        fillCursor = checkpoint.fillCursor
        cursor = checkpoint.cursor
        updatedAt = Output.time(checkpoint.updatedAt)
    }

    enum CodingKeys: String, CodingKey { case scope, applied, fillTop, fillCursor, cursor, updatedAt }

    /// Every key, with `null` for an unset one.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(scope, forKey: .scope)
        try c.encode(applied, forKey: .applied)
        try c.encode(fillTop, forKey: .fillTop)
        try c.encode(fillCursor, forKey: .fillCursor)
        try c.encode(cursor, forKey: .cursor)
        try c.encode(updatedAt, forKey: .updatedAt)
    }
}

import Foundation
import GRDB
import Logging

/// Brings the search index up to date after commits, off the write paths: the store's one
/// indexer (``SearchIndex`` says what a batch does).
///
/// A transaction observer on the store's writer notes each commit that stored a message or
/// changed what one shows; once the writes have been quiet for `StoreOptions.searchIndexDelay`
/// (0.25 s; never more than ``maximumLag`` after the first waiting write), the indexer runs
/// batches of ``SearchIndex/batch`` messages, each in its own write transaction, at utility
/// priority, until nothing is left. Commits that arrive meanwhile make it go round once more,
/// never start a second one. The wait is real time (a `ContinuousClock`), not the store's
/// clock: a test's virtual clock must not jump, nor count the indexer among its sleepers. A search read once (``ChatStore/fetch(_:)``) first waits for the index to catch
/// up (``indexPending()``), so it finds what was just written; an observed search gets its next
/// value when the indexer commits.
final class SearchIndexer: @unchecked Sendable {
    /// Weak: a store released (a command line tool's, at exit) closes its connections after the
    /// batch under way, instead of an indexer keeping them open (and its WAL unchecked).
    private weak let writer: (any DatabaseWriter)?
    /// The indexer's batches keep the WAL small, as the drain's commits do: a store short of
    /// space is not filled by the index's writes (`docs/store.md`, "Disk space").
    private let walBudget: WALBudget
    private let logger: Logger
    private let lock = NSLock()
    private var current = State()

    /// How long after the writes go quiet the indexer starts.
    private let delay: Duration
    /// The most the indexer waits for quiet after the first write that left it work.
    static let maximumLag: Duration = .seconds(5)

    private struct State {
        /// When the last commit that left work came; when the first one since the last pass did.
        var lastCommit = ContinuousClock.now
        var firstWaiting: ContinuousClock.Instant?
        var running = false
        var again = false
        var closed = false
        var task: Task<Void, Never>?
    }

    /// `current` under the lock, its only access (hence `@unchecked Sendable`).
    private func withState<T>(_ body: (inout State) -> T) -> T {
        lock.withLock { body(&current) }
    }

    /// The observer to add to the writer (which holds it weakly: the indexer keeps it, and it
    /// reaches the indexer weakly): it schedules the indexer after each commit that stored a
    /// message or may have changed what one shows.
    let observer: any TransactionObserver & Sendable

    init(writer: any DatabaseWriter, walBudget: WALBudget, delay: TimeInterval, logger: Logger) {
        self.delay = .milliseconds(Int64((max(0, delay.isFinite ? delay : 0) * 1000).rounded()))
        self.writer = writer
        self.walBudget = walBudget
        self.logger = logger
        let observer = CommitObserver()
        self.observer = observer
        observer.indexer = self
    }

    /// Schedules the indexer when anything is waiting (one read): after the store opened or migrated.
    func scheduleIfWaiting() {
        guard let writer, (try? writer.read({ try SearchIndex.hasWork($0) })) == true else { return }
        schedule()
    }

    /// Indexes what is waiting, in the background; returns at once.
    func schedule() {
        withState { state in
            guard !state.closed else { return }
            state.lastCommit = .now
            if state.firstWaiting == nil { state.firstWaiting = state.lastCommit }
            if state.running {
                state.again = true
                return
            }
            state.running = true
            // Made under the lock, so that `close()` always cancels the task under way.
            state.task = Task.detached(priority: .utility) { [self] in await run() }
        }
    }

    private func run() async {
        while true {
            // Quiet first: the last commit `delay` ago, or the first waiting one `maximumLag` ago.
            while true {
                let due = withState { state in
                    min(state.lastCommit + delay, (state.firstWaiting ?? state.lastCommit) + Self.maximumLag)
                }
                if ContinuousClock.now >= due { break }
                do {
                    try await Task.sleep(until: due, clock: .continuous)
                } catch {
                    withState { state in (state.running, state.task) = (false, nil) }
                    return
                }
            }
            withState { state in (state.again, state.firstWaiting) = (false, nil) }
            do {
                // Batch after batch while the writes stay quiet; a commit meanwhile sends the
                // indexer back to waiting (a burst past `maximumLag` gets one batch per lag, not
                // an indexer that takes the writer between all its remaining commits).
                try await indexPending(until: { self.withState { $0.again } })
            } catch {
                if !withState({ $0.closed }) {
                    logger.warning("search: indexing failed; the next write tries again", metadata: ["error": "\(error)"])
                }
            }
            let more = withState { state -> Bool in
                if state.again, !state.closed, !Task.isCancelled { return true }
                state.running = false
                state.task = nil
                return false
            }
            if !more { return }
        }
    }

    /// Indexes everything waiting now, batch after batch; returns when nothing is left (at once,
    /// with only a read, when nothing was). Stops between batches when the task is cancelled.
    ///
    /// A store with less than 64 MiB free (`WALBudget.shortOfSpaceBytes`) indexes nothing: the
    /// index would take the space the messages and ops need; searches say what is not indexed
    /// (`unindexed`) until space is freed and the next write comes. `interrupted` is asked before
    /// each batch: the background pass stops when a write came meanwhile.
    func indexPending(until interrupted: @Sendable () -> Bool = { false }) async throws {
        guard !walBudget.isShortOfSpace, let writer, try await writer.read({ try SearchIndex.hasWork($0) }) else { return }
        while !interrupted() {
            try Task.checkCancellation()
            guard let writer = self.writer else { return }
            if try await walBudget.write(writer, keepSmall: true, { try SearchIndex.indexBatch($0) }) == 0 { return }
        }
    }

    /// ``indexPending()``, blocking the calling thread (never from a database access).
    func indexPendingNow() throws {
        guard !walBudget.isShortOfSpace, let writer, try writer.read({ try SearchIndex.hasWork($0) }) else { return }
        while try writer.write({ try SearchIndex.indexBatch($0) }) > 0 {}
    }

    /// Stops for good: no batch starts after the one under way.
    func close() {
        withState { state in
            state.closed = true
            state.task?.cancel()
        }
    }

    /// Called on the writer's queue only (GRDB serializes a writer's transactions), so its flag
    /// needs no lock.
    private final class CommitObserver: TransactionObserver, @unchecked Sendable {
        /// Set once, right after init.
        weak var indexer: SearchIndexer?
        private var changed = false

        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
            switch eventKind {
            case .insert(let table):
                return table == "messages" || table == "search_dirty" || table == "message_actions" || table == "message_editors"
            case .update(let table, let columns):
                return (table == "messages" && !columns.isDisjoint(with: ["text", "timetoken", "local_seq"]))
                    || table == "message_actions"
            case .delete(let table):
                return table == "message_actions" || table == "message_editors"
            }
        }

        func databaseDidChange(with event: DatabaseEvent) {
            changed = true
            stopObservingDatabaseChangesUntilNextTransaction()
        }

        func databaseDidCommit(_ db: Database) {
            guard changed else { return }
            changed = false
            indexer?.schedule()
        }

        func databaseDidRollback(_ db: Database) { changed = false }
    }
}

extension ChatStore {
    /// Indexes for search every message not indexed yet (just written, or the whole store after
    /// the migration that made the index), ``SearchIndex/batch`` messages per transaction, so that
    /// other writes get the writer between batches; returns at once when none is left (or the
    /// store is read-only). The store does the same in the background once its writes are quiet;
    /// a search read once calls this first. Stops between batches when
    /// the task is cancelled (what is indexed stays indexed).
    package func indexPending() async throws {
        try await searchIndexer?.indexPending()
    }
}

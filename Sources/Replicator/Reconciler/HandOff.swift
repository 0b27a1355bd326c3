/// A bounded hand-over from one producer to one consumer: a catch-up's fetcher (which requests
/// and decodes pages) and its writer (which commits them).
///
/// The producer waits while ``capacity`` items are held, so memory stays bounded however fast it
/// runs. The consumer takes everything held at once, which lets it commit several pages in one
/// transaction when the network outpaces the disk, and one at a time when it does not.
actor HandOff<Element: Sendable> {
    private var items: [Element] = []
    private var ended = false
    private var failure: (any Error)?
    private var closed = false
    private var waitingTaker: CheckedContinuation<Void, Never>?
    private var waitingPutter: CheckedContinuation<Void, Never>?
    /// The most items held at once.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Adds an item, waiting while ``capacity`` are held. False when the consumer has left
    /// (``close()``): the producer should stop.
    func put(_ item: Element) async -> Bool {
        while items.count >= capacity && !closed {
            await withCheckedContinuation { waitingPutter = $0 }
        }
        guard !closed else { return false }
        items.append(item)
        wake(&waitingTaker)
        return true
    }

    /// The producer is done; `error`, when given, reaches the consumer after the items before it.
    func finish(throwing error: (any Error)? = nil) {
        ended = true
        failure = error
        wake(&waitingTaker)
    }

    /// Every item held, waiting for at least one; nil when the producer finished and everything
    /// was taken. Throws the producer's error once the items before it are taken.
    func takeAll() async throws -> [Element]? {
        while items.isEmpty && !ended {
            await withCheckedContinuation { waitingTaker = $0 }
        }
        if !items.isEmpty {
            let taken = items
            items = []
            wake(&waitingPutter)
            return taken
        }
        if let failure { throw failure }
        return nil
    }

    /// The consumer leaves: a waiting or later ``put(_:)`` returns false.
    func close() {
        closed = true
        items = []
        wake(&waitingPutter)
    }

    private func wake(_ waiter: inout CheckedContinuation<Void, Never>?) {
        waiter?.resume()
        waiter = nil
    }
}

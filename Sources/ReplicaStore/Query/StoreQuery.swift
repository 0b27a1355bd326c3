import Foundation
import GRDB

/// A read of the store, runnable once (`ChatStore.fetch(_:)`) or live (`ChatStore.observe(_:)`).
public struct StoreQuery<Value: Sendable>: Sendable {
    /// Reads the value inside a GRDB read transaction.
    public let fetch: @Sendable (Database) throws -> Value
    /// Whether the query reads the search index: ``ChatStore/fetch(_:)`` then lets the index
    /// catch up with the last writes first (``SearchIndexer``).
    package var readsSearchIndex = false

    /// A query from a GRDB read.
    public init(_ fetch: @escaping @Sendable (Database) throws -> Value) {
        self.fetch = fetch
    }

    /// A query whose value is transformed by `transform`.
    public func map<Other: Sendable>(_ transform: @escaping @Sendable (Value) throws -> Other) -> StoreQuery<Other> {
        let fetch = self.fetch
        var mapped = StoreQuery<Other> { try transform(fetch($0)) }
        mapped.readsSearchIndex = readsSearchIndex
        return mapped
    }
}

/// The live values of a query: an `AsyncSequence` that yields the current value, then a new value
/// after each committed transaction that changes it (GRDB `ValueObservation`, duplicates removed).
public struct StoreObservation<Value: Sendable & Equatable>: AsyncSequence, Sendable {
    /// The values.
    public typealias Element = Value
    /// Observation fails with the error the query threw.
    public typealias Failure = any Error

    let query: StoreQuery<Value>
    let writer: any DatabaseWriter

    /// Starts observing; observation stops when the iterator is released or its task cancelled.
    public func makeAsyncIterator() -> Iterator {
        let fetch = query.fetch
        let observation = ValueObservation.tracking { try fetch($0) }.removeDuplicates()
        return Iterator(base: observation.values(in: writer).makeAsyncIterator())
    }

    /// Iterates the values.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncValueObservation<Value>.Iterator

        /// The next value, or nil when observation ended.
        public mutating func next() async throws -> Value? {
            try await base.next()
        }
    }
}

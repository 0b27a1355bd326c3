import Foundation
import GRDB
import GRDBSQLite
import ReplicaModel

/// Converts between model values and column values. One instance per transaction: JSON coders
/// are costly to create.
struct StoreCoding {
    let encoder: JSONEncoder
    let decoder = JSONDecoder()

    init() {
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    /// ``json(_:)-(T?)`` of an op's payload, without the generic function's casts (every enqueue
    /// writes one).
    func json(_ payload: OutboxPayload) throws -> String {
        if let text = Self.fastJSON(payload) { return text }
        return String(decoding: try encoder.encode(payload), as: UTF8.self)
    }

    /// An op payload's column text from the fast writer, which needs no encoder; nil where it
    /// leaves the payload to `JSONEncoder` (``json(_:)-(OutboxPayload)``).
    static func fastJSON(_ payload: OutboxPayload) -> String? {
        payload.jsonValue.compactJSONBytes().map { String(decoding: $0, as: UTF8.self) }
    }

    /// Compact JSON text of `value`, or nil. ``ReplicaModel/JSONValue`` and
    /// ``ReplicaModel/FlatCustom`` (every message's `content` and the default `custom`) take the
    /// fast writer, which writes the same text as the encoder.
    func json<T: Encodable>(_ value: T?) throws -> String? {
        guard let value else { return nil }
        if let json = value as? JSONValue ?? (value as? FlatCustom)?.jsonValue ?? (value as? OutboxPayload)?.jsonValue,
           let bytes = json.compactJSONBytes()
        {
            return String(decoding: bytes, as: UTF8.self)
        }
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Decodes JSON text from a column, naming the column on failure. `fast` reads the fast
    /// parser's value when it can (nil: `JSONDecoder` decodes the text).
    func decode<T: Decodable>(
        _ type: T.Type, _ text: String?, table: String, column: String, key: String, fast: ((JSONValue) -> T?)? = nil
    ) throws -> T? {
        guard let text else { return nil }
        if let fast, let json = JSONValue.parse(text: text), let value = fast(json) { return value }
        if T.self == JSONValue.self, let value = JSONValue.parse(text: text) { return value as? T }
        do {
            return try decoder.decode(T.self, from: Data(text.utf8))
        } catch {
            throw StoreError.corruptValue(table: table, column: column, key: key, message: "\(error)")
        }
    }

    /// A timetoken as an SQLite integer.
    static func column(_ timetoken: Timetoken?, field: String) throws(StoreError) -> Int64? {
        guard let timetoken else { return nil }
        guard let value = Int64(exactly: timetoken.rawValue) else {
            throw StoreError.valueOutOfRange(field: field, value: timetoken.description)
        }
        return value
    }

    /// An SQLite integer as a timetoken.
    static func timetoken(_ value: Int64?) -> Timetoken? {
        guard let value, value >= 0 else { return nil }
        return Timetoken(rawValue: UInt64(value))
    }

    /// An ISO text column as a timestamp.
    static func timestamp(_ text: String?, table: String, column: String, key: String) throws -> ISOTimestamp? {
        guard let text else { return nil }
        do {
            return try ISOTimestamp(parsing: text)
        } catch {
            throw StoreError.corruptValue(table: table, column: column, key: key, message: error.description)
        }
    }
}

/// The result of writing one batch of ``ChatStore`` `load(...)`.
public struct LoadBatchResult: Sendable, Hashable {
    /// Position of the batch (0-based).
    public var index: Int
    /// How many objects the batch held.
    public var count: Int
    /// Objects that were new.
    public var inserted = 0
    /// Objects that replaced an older stored version.
    public var updated = 0
    /// Objects left as they were: same eTag or older than the stored one (objects), identical
    /// (messages and actions).
    public var unchanged = 0
    /// Why the batch was not written (its transaction was rolled back), or nil.
    public var error: StoreError?

    /// An empty result for batch `index` of `count` objects.
    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }
}

/// What a whole `load(...)` call did, batch by batch.
public struct LoadReport: Sendable, Hashable {
    /// One result per batch, in order.
    public var batches: [LoadBatchResult] = []

    /// New objects.
    public var inserted: Int { batches.reduce(0) { $0 + $1.inserted } }
    /// Objects that replaced older versions.
    public var updated: Int { batches.reduce(0) { $0 + $1.updated } }
    /// Objects left as they were.
    public var unchanged: Int { batches.reduce(0) { $0 + $1.unchanged } }
    /// The batches that failed (rolled back).
    public var failedBatches: [LoadBatchResult] { batches.filter { $0.error != nil } }
    /// Whether every batch was written.
    public var succeeded: Bool { failedBatches.isEmpty }
}

/// What a `patch` did.
public enum PatchResult: Sendable, Hashable {
    /// The stored object was updated.
    case applied
    /// The changeset was older than the stored object (or carried its eTag) and was ignored.
    case ignored
    /// Nothing is stored under that id; the changeset was not applied.
    case notFound
}

/// How one upsert statement ended: a new row, a changed row, or nothing changed.
package enum UpsertOutcome: Sendable {
    case inserted, updated, unchanged
}

extension Database {
    /// Runs a cached upsert statement and tells whether it inserted, updated or did nothing.
    ///
    /// SQLite leaves `last_insert_rowid()` alone when `ON CONFLICT DO UPDATE` updates. Setting it
    /// to 0 first (a rowid SQLite never assigns) makes a non-zero value afterwards mean an insert.
    func upsert(_ statement: Statement, _ arguments: StatementArguments) throws -> UpsertOutcome {
        sqlite3_set_last_insert_rowid(sqliteConnection, 0)
        try statement.execute(arguments: arguments)
        return upsertOutcome()
    }

    /// ``upsert(_:_:)`` for a statement run once per row (a history page's messages): `values`
    /// are bound straight to SQLite, one per parameter in order, which costs a fraction of building
    /// `StatementArguments`. GRDB still runs the statement (its observation sees the change). The
    /// statement must not have failed before: GRDB evicts a failed statement from its cache, and so
    /// must a caller that keeps one.
    func upsert(_ statement: Statement, values: [DatabaseValue]) throws -> UpsertOutcome {
        try bind(values, to: statement)
        sqlite3_set_last_insert_rowid(sqliteConnection, 0)
        try statement.execute()
        return upsertOutcome()
    }

    /// Binds `values` straight to SQLite, one per parameter of `statement` in order, which costs a
    /// fraction of building `StatementArguments`; then `statement.execute()` runs it with them.
    func bind(_ values: [DatabaseValue], to statement: Statement) throws {
        let parameters = Int(sqlite3_bind_parameter_count(statement.sqliteStatement))
        guard values.count == parameters else {
            throw DatabaseError(resultCode: .SQLITE_RANGE, message: "\(values.count) values for \(parameters) parameters", sql: statement.sql)
        }
        // Resets the statement and marks its (no) arguments bound, so that `execute()` runs it with
        // the bindings made here.
        statement.setUncheckedArguments(StatementArguments())
        let handle = statement.sqliteStatement
        for (offset, value) in values.enumerated() {
            try Self.bind(value, at: CInt(offset + 1), of: handle, sql: statement.sql)
        }
    }

    /// Binds one value to parameter `index` of a prepared statement (``bind(_:to:)``,
    /// ``MultiRowInsert``); SQLite copies texts and blobs.
    static func bind(_ value: DatabaseValue, at index: CInt, of handle: SQLiteStatement, sql: @autoclosure () -> String) throws {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let code: CInt
        switch value.storage {
        case .null: code = sqlite3_bind_null(handle, index)
        case .int64(let number): code = sqlite3_bind_int64(handle, index, number)
        case .double(let number): code = sqlite3_bind_double(handle, index, number)
        // Its UTF-8 bytes in place, with their length: a Swift string passed as a C string is
        // copied into a new buffer first when it is small (up to 15 bytes, stored inline).
        case .string(let text):
            var text = text
            code = text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    sqlite3_bind_text(handle, index, chars.baseAddress ?? emptyText, CInt(chars.count), transient)
                }
            }
        case .blob(let data):
            // An empty `Data` has no address, and SQLite binds a null pointer as NULL, not as an empty blob.
            code = data.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress ?? UnsafeRawPointer(emptyText), CInt($0.count), transient) }
        }
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot bind argument \(index)", sql: sql())
        }
    }

    /// A valid pointer for an empty text or blob (SQLite binds a null pointer as NULL, not as '').
    private static var emptyText: UnsafePointer<CChar> { UnsafeRawPointer(("" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self) }

    private func upsertOutcome() -> UpsertOutcome {
        if changesCount == 0 { return .unchanged }
        return lastInsertedRowID != 0 ? .inserted : .updated
    }
}

extension LoadBatchResult {
    mutating func record(_ outcome: UpsertOutcome) {
        switch outcome {
        case .inserted: inserted += 1
        case .updated: updated += 1
        case .unchanged: unchanged += 1
        }
    }
}

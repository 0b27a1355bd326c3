import GRDB

/// Inserts many rows of one table with `INSERT … VALUES (…), (…), …` statements of up to
/// ``rowsPerStatement`` rows: a batch send writes its messages and ops this way.
///
/// SQLite spends about as much on running an insert statement (opening a cursor per index,
/// the statement's journal, halting) as on the b-tree writes of one small row: 100,000 messages
/// and their ops took 2.5 s inserted one row per statement and 1.4 s fifty rows per statement
/// (the system SQLite, C, on this project's CI machine; `docs/performance.md`).
struct MultiRowInsert: Sendable {
    /// Rows per statement: 50 rows of 22 columns stay far below the 32,766 parameters SQLite
    /// allows on Apple platforms.
    static let rowsPerStatement = 50

    /// `INSERT INTO table (columns) VALUES` and one row's placeholders (literals allowed).
    let head: String
    let row: String
    /// How many placeholders one row has (every `?` in ``row``).
    let parameters: Int
    /// The statements for one row (a single enqueue) and for ``rowsPerStatement`` rows, made once.
    let oneSQL: String, fullSQL: String

    init(table: String, columns: [String], row: String) {
        head = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
        self.row = row
        parameters = row.filter { $0 == "?" }.count
        oneSQL = head + row
        fullSQL = head + Array(repeating: row, count: Self.rowsPerStatement).joined(separator: ", ")
    }

    /// The statement for `count` rows.
    func sql(rows count: Int) -> String {
        switch count {
        case 1: oneSQL
        case Self.rowsPerStatement: fullSQL
        default: head + Array(repeating: row, count: count).joined(separator: ", ")
        }
    }

    /// Inserts `rows` (each ``parameters`` values), in order.
    func insert(_ rows: [[DatabaseValue]], in db: Database) throws {
        var start = 0
        while start < rows.count {
            let count = min(Self.rowsPerStatement, rows.count - start)
            var values: [DatabaseValue] = []
            values.reserveCapacity(count * parameters)
            for row in rows[start..<start + count] {
                guard row.count == parameters else {
                    throw DatabaseError(resultCode: .SQLITE_RANGE, message: "a row of \(row.count) values for \(parameters) placeholders", sql: head)
                }
                values.append(contentsOf: row)
            }
            let statement = try db.cachedStatement(sql: sql(rows: count))
            try db.bind(values, to: statement)
            try statement.execute()
            start += count
        }
    }

    /// New messages: every column (``MessageColumn``).
    static let messages = MultiRowInsert(
        table: "messages", columns: MessageColumn.allCases.map(\.name),
        row: "(" + MessageColumn.allCases.map { _ in "?" }.joined(separator: ", ") + ")")

    /// New outbox ops, pending (``OutboxTable/insertOps(_:now:)``).
    static let outboxOps = MultiRowInsert(
        table: "outbox",
        columns: [
            "op_id", "seq", "kind", "lane", "target", "payload", "base_etag", "base_updated", "base_snapshot", "depends_on",
            "state", "created_at", "updated_at",
        ],
        row: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)")
}

import GRDB

/// Inserts many rows of one table with `INSERT … VALUES (…), (…), …` statements of up to
/// ``rowsPerStatement`` rows: a batch send writes its messages and ops this way.
///
/// SQLite spends about as much on running an insert statement (opening a cursor per index,
/// the statement's journal, halting) as on the b-tree writes of one small row: 100,000 messages
/// and their ops took 2.5 s inserted one row per statement and 1.4 s fifty rows per statement
/// (the system SQLite, C, on this project's CI machine; `docs/performance.md`).
struct MultiRowInsert: Sendable {
    /// Rows per statement: 50 rows of 14 values (a message) stay far below the 32,766 parameters
    /// SQLite allows on Apple platforms.
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

    /// Inserts rows whose values are `values`, one row's ``parameters`` values after another, in
    /// order. With `sequence`, that column's value in each row is replaced by a number counted up
    /// from `first` (the local send order, the outbox's order: given by the transaction to rows
    /// made before it, ``NewMessageRows`` and ``NewOpRows``).
    func insert(_ values: [DatabaseValue], sequence: (column: Int, first: Int64)? = nil, in db: Database) throws {
        guard values.count % parameters == 0 else {
            throw DatabaseError(
                resultCode: .SQLITE_RANGE, message: "\(values.count) values for rows of \(parameters) placeholders", sql: head)
        }
        let rows = values.count / parameters, column = sequence?.column ?? -1, first = sequence?.first ?? 0
        var start = 0
        while start < rows {
            let count = min(Self.rowsPerStatement, rows - start)
            let statement = try db.cachedStatement(sql: sql(rows: count))
            // Resets the statement and marks its (no) arguments bound, so that `execute()` runs it
            // with the bindings made here.
            statement.setUncheckedArguments(StatementArguments())
            let handle = statement.sqliteStatement
            var index: CInt = 1
            for row in start..<start + count {
                let base = row * parameters
                for offset in 0..<parameters {
                    let value = offset == column ? (first + Int64(row)).databaseValue : values[base + offset]
                    try Database.bind(value, at: index, of: handle, sql: statement.sql)
                    index += 1
                }
            }
            try statement.execute()
            start += count
        }
    }

    /// New messages: every column (``MessageColumn``).
    static let messages = MultiRowInsert(
        table: "messages", columns: MessageColumn.allCases.map(\.name),
        row: "(" + MessageColumn.allCases.map { _ in "?" }.joined(separator: ", ") + ")")

    /// New outbox ops, pending (``OutboxTable/insertOps(_:)``).
    static let outboxOps = MultiRowInsert(
        table: "outbox",
        columns: [
            "op_id", "seq", "kind", "lane", "target", "payload", "base_etag", "base_updated", "base_snapshot", "depends_on",
            "state", "created_at", "updated_at",
        ],
        row: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)")
}

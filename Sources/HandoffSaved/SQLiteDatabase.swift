import CSQLite

/// One SQLite connection: open, run SQL with bound arguments, read rows, and transactions. A thin
/// layer over the C API, just what the saved activities need.
///
/// Opened without SQLite's own mutex: the caller lets one thread at a time use it, as
/// ``SavedActivityIndex`` does with its lock (hence the unchecked `Sendable`).
final class SQLiteDatabase: @unchecked Sendable {
    private let handle: OpaquePointer

    /// Opens (or creates) the database at `path`; nil opens a private one in memory.
    init(path: String?) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path ?? ":memory:", &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close(handle)
            throw SQLiteError(code: code, message: message, context: "opening \(path ?? ":memory:")")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit { sqlite3_close(handle) }

    /// Runs one or more statements with no arguments and no results (schema, pragmas).
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql) }
    }

    /// Runs one statement with `arguments` bound to its `?`s; returns how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        _ = try rows(sql, arguments)
        return Int(sqlite3_changes(handle))
    }

    /// Runs one query with `arguments` bound to its `?`s; returns every row.
    func rows(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> [SQLiteRow] {
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK, let statement else { throw error(prepared, sql) }
        defer { sqlite3_finalize(statement) }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code = switch argument {
            case .null: sqlite3_bind_null(statement, index)
            case .integer(let value): sqlite3_bind_int64(statement, index, value)
            case .real(let value): sqlite3_bind_double(statement, index, value)
            case .text(let value): sqlite3_bind_text(statement, index, value, -1, transient)
            }
            guard code == SQLITE_OK else { throw error(code, sql) }
        }
        let names = (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
        var rows: [SQLiteRow] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return rows }
            guard code == SQLITE_ROW else { throw error(code, sql) }
            var values: [String: SQLiteValue] = [:]
            for (column, name) in names.enumerated() { values[name] = value(statement, Int32(column)) }
            rows.append(SQLiteRow(values: values))
        }
    }

    /// Runs `body` in one immediate transaction: committed when it returns, rolled back when it throws.
    func transaction<Result>(_ body: (SQLiteDatabase) throws -> Result) throws -> Result {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body(self)
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func value(_ statement: OpaquePointer, _ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: .real(sqlite3_column_double(statement, column))
        case SQLITE_NULL: .null
        default: sqlite3_column_text(statement, column).map { .text(String(cString: $0)) } ?? .null
        }
    }

    private func error(_ code: Int32, _ sql: String) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), context: "executing `\(sql)`")
    }

    /// SQLITE_TRANSIENT: SQLite copies bound text before the call returns.
    private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

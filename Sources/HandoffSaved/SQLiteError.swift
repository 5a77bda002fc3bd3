/// A failed SQLite call: its result code, SQLite's message, and the statement or file involved.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// SQLite's (extended) result code, for example 14 (`SQLITE_CANTOPEN`).
    public var code: Int32
    /// SQLite's message for it ("unable to open database file").
    public var message: String
    /// What was being done: the SQL, or "opening PATH".
    public var context: String

    public var description: String { "SQLite error \(code): \(message) - while \(context)" }
}

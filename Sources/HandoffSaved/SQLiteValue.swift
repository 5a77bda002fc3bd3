/// A value SQLite stores or returns: NULL, an integer, a real number or text.
enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    /// Text, or NULL for nil.
    static func text(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
    /// A real number, or NULL for nil.
    static func real(_ value: Double?) -> SQLiteValue { value.map { .real($0) } ?? .null }
    /// An integer.
    static func integer(_ value: Int) -> SQLiteValue { .integer(Int64(value)) }

    /// The text, nil for NULL (an integer or real is not text here).
    var textValue: String? { if case .text(let text) = self { text } else { nil } }
    /// The number as a Double (integers widened), nil for NULL or text.
    var doubleValue: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        case .null, .text: nil
        }
    }
    /// The number as an Int (reals truncated), nil for NULL or text.
    var intValue: Int? {
        switch self {
        case .integer(let value): Int(value)
        case .real(let value): Int(value)
        case .null, .text: nil
        }
    }
}

/// One result row: its values by column name.
struct SQLiteRow: Sendable {
    let values: [String: SQLiteValue]

    subscript(_ column: String) -> SQLiteValue { values[column] ?? .null }
}

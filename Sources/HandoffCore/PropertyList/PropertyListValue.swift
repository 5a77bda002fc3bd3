#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A property-list value: what an activity's userInfo may hold.
///
/// The cases are the property-list types NSUserActivity accepts in userInfo: array, data, date,
/// dictionary, null, number (integer, floating point or boolean), string, URL and UUID.
public indirect enum PropertyListValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case data(Data)
    case date(Date)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])
    case url(URL)
    case uuid(UUID)
    case null

    /// Exact equality: doubles and dates compare by bit pattern, so NaN equals NaN and 0.0 differs
    /// from -0.0. This is the equality the wire encoding preserves.
    public func isIdentical(to other: PropertyListValue) -> Bool {
        switch (self, other) {
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        case (.date(let a), .date(let b)):
            return a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { value.isIdentical(to: $0) } ?? false }
        default: return self == other
        }
    }

    /// A short name of the type, for error messages.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .double: "double"
        case .bool: "bool"
        case .data: "data"
        case .date: "date"
        case .array: "array"
        case .dictionary: "dictionary"
        case .url: "url"
        case .uuid: "uuid"
        case .null: "null"
        }
    }
}

/// An activity's userInfo dictionary.
public typealias UserInfo = [String: PropertyListValue]

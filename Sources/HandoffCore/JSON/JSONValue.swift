/// A JSON document that keeps each number's text, so integers and floating-point numbers stay
/// distinct (`1` and `1.0` differ) when userInfo crosses the CLI, the control socket and handlers.
///
/// Foundation's JSON types cannot tell `1` from `1.0`, which would break the exact round trip
/// of property-list userInfo; that is why the core has its own small strict parser.
public indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number, as written (validated JSON number syntax).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// An integer number.
    public static func integer<I: BinaryInteger>(_ value: I) -> JSONValue { .number(String(value)) }

    /// A floating-point number; always written with a fraction or exponent so it reads back as
    /// floating point. Non-finite values have no JSON form and become `null`.
    public static func double(_ value: Double) -> JSONValue {
        guard value.isFinite else { return .null }
        var text = "\(value)"
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { text += ".0" }
        return .number(text)
    }

    /// The member of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    /// The boolean, if this is a boolean.
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
    /// The value as an integer, if this is a number written as an integer that fits in Int64.
    public var int64Value: Int64? { if case .number(let n) = self { Int64(n) } else { nil } }
    /// The value as a Double, if this is a number.
    public var doubleValue: Double? { if case .number(let n) = self { Double(n) } else { nil } }
    /// Whether this number is written as an integer (no fraction, no exponent).
    public var isIntegerNumber: Bool {
        if case .number(let n) = self { return !n.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) }
        return false
    }

    /// A short name of the JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a JSON value could not be turned into a property-list value.
public struct PropertyListJSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the document, as a key path such as `userInfo.items[2]`.
    public var path: String
    /// What is wrong and how to write it instead.
    public var reason: String
    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}

/// Where a value sits in a JSON document being converted (``PropertyListValue/init(json:)``): its
/// keys and indexes from the top, written out (``text``) only when there is an error to report, so
/// a conversion makes no text for the values that are fine.
struct PropertyListJSONPath {
    enum Step {
        case key(String)
        case index(Int)
    }

    var steps: [Step] = []

    /// A key path such as `userInfo.items[2]` (empty at the top).
    var text: String {
        var out = ""
        for step in steps {
            switch step {
            case .key(let key): out += out.isEmpty ? key : ".\(key)"
            case .index(let i): out += "[\(i)]"
            }
        }
        return out
    }
}

/// The JSON form of property-list values, used by the CLI (`--user-info`), the control socket and
/// the JSON that handler commands read on standard input.
///
/// Plain JSON maps directly: null, booleans, strings, arrays and objects; a number written without
/// fraction or exponent is an integer, any other number a double. The types JSON lacks are objects
/// with one tagged key:
///
/// | value | JSON |
/// |---|---|
/// | data | `{"$data": "<base64>"}` |
/// | date | `{"$date": "2026-11-22T10:00:00.250Z"}` (ISO 8601; a number of seconds since 1970 is also accepted) |
/// | URL | `{"$url": "https://example.com"}` |
/// | UUID | `{"$uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}` |
/// | non-finite double | `{"$double": "nan"}`, `"inf"`, `"-inf"` |
/// | a dictionary whose only key is one of these tags | `{"$dict": {...}}` |
extension PropertyListValue {
    static let tags: Set<String> = ["$data", "$date", "$url", "$uuid", "$double", "$dict"]

    /// Converts JSON to a property-list value (see the table above).
    public init(json: JSONValue) throws(PropertyListJSONError) {
        var path = PropertyListJSONPath()
        try self.init(json: json, path: &path)
    }

    /// `path`: where `json` sits, written out only for an error; as it was when called, once this returns.
    init(json: JSONValue, path: inout PropertyListJSONPath) throws(PropertyListJSONError) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .string(let s): self = .string(s)
        case .number(let text):
            if json.isIntegerNumber {
                guard let i = Int64(text) else {
                    throw PropertyListJSONError(path: path.text, reason: "integer \(text) does not fit in 64 bits; write it as a double (\(text).0) or a string")
                }
                self = .integer(i)
            } else {
                guard let d = Double(text), d.isFinite else {
                    throw PropertyListJSONError(path: path.text, reason: "number \(text) is out of range")
                }
                self = .double(d)
            }
        case .array(let elements):
            var values: [PropertyListValue] = []
            values.reserveCapacity(elements.count)
            for (i, element) in elements.enumerated() {
                path.steps.append(.index(i))
                values.append(try PropertyListValue(json: element, path: &path))
                path.steps.removeLast()
            }
            self = .array(values)
        case .object(let members):
            if members.count == 1, let (tag, body) = members.first, Self.tags.contains(tag) {
                self = try Self.tagged(tag, body, path: &path)
            } else {
                self = .dictionary(try Self.dictionary(members, path: &path))
            }
        }
    }

    private static func tagged(_ tag: String, _ body: JSONValue, path: inout PropertyListJSONPath) throws(PropertyListJSONError) -> PropertyListValue {
        func bad(_ expected: String) -> PropertyListJSONError {
            PropertyListJSONError(path: path.text, reason: "\(tag) needs \(expected), got \(body.typeName)")
        }
        switch tag {
        case "$data":
            guard let text = body.stringValue, let data = Data(base64Encoded: text) else { throw bad("a base64 string") }
            return .data(data)
        case "$date":
            switch body.stringValue?.lowercased() {
            case "nan": return .date(Date(timeIntervalSince1970: .nan))
            case "inf": return .date(Date(timeIntervalSince1970: .infinity))
            case "-inf": return .date(Date(timeIntervalSince1970: -.infinity))
            default: break
            }
            if let text = body.stringValue {
                guard let date = parseISO8601(text) else {
                    throw PropertyListJSONError(path: path.text, reason: "$date \"\(text)\" is not ISO 8601 such as 2026-11-22T10:00:00Z")
                }
                return .date(date)
            }
            guard let seconds = body.doubleValue else { throw bad("an ISO 8601 string or seconds since 1970") }
            return .date(Date(timeIntervalSince1970: seconds))
        case "$url":
            guard let text = body.stringValue, let url = URL(string: text) else { throw bad("a URL string") }
            return .url(url)
        case "$uuid":
            guard let text = body.stringValue, let uuid = UUID(uuidString: text) else { throw bad("a UUID string") }
            return .uuid(uuid)
        case "$double":
            switch body.stringValue?.lowercased() {
            case "nan": return .double(.nan)
            case "inf", "+inf", "infinity": return .double(.infinity)
            case "-inf", "-infinity": return .double(-.infinity)
            default:
                guard let d = body.doubleValue else { throw bad("a number, \"nan\", \"inf\" or \"-inf\"") }
                return .double(d)
            }
        default:  // "$dict": a dictionary whose keys would otherwise read as a tag
            guard case .object(let members) = body else { throw bad("an object") }
            return .dictionary(try dictionary(members, path: &path))
        }
    }

    private static func dictionary(_ members: [String: JSONValue], path: inout PropertyListJSONPath) throws(PropertyListJSONError) -> [String: PropertyListValue] {
        var values: [String: PropertyListValue] = [:]
        values.reserveCapacity(members.count)
        for (key, member) in members {
            path.steps.append(.key(key))
            values[key] = try PropertyListValue(json: member, path: &path)
            path.steps.removeLast()
        }
        return values
    }

    /// The JSON form (see the table above).
    public var json: JSONValue {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .string(let s): return .string(s)
        case .integer(let i): return .integer(i)
        case .double(let d):
            if d.isNaN { return .object(["$double": .string("nan")]) }
            if d.isInfinite { return .object(["$double": .string(d < 0 ? "-inf" : "inf")]) }
            return .double(d)
        case .data(let d): return .object(["$data": .string(d.base64EncodedString())])
        case .date(let d): return .object(["$date": Self.dateJSON(d)])
        case .url(let u): return .object(["$url": .string(u.absoluteString)])
        case .uuid(let u): return .object(["$uuid": .string(u.uuidString)])
        case .array(let a): return .array(a.map(\.json))
        case .dictionary(let members):
            let object = JSONValue.object(members.mapValues(\.json))
            if members.count == 1, let key = members.keys.first, Self.tags.contains(key) {
                return .object(["$dict": object])
            }
            return object
        }
    }

    /// Dates from years 1 to 9999 as ISO 8601; others as seconds since 1970 (a number), and
    /// non-finite ones as "nan", "inf" or "-inf": every date a peer can send has a JSON form.
    static func dateJSON(_ date: Date) -> JSONValue {
        let seconds = date.timeIntervalSince1970
        if seconds.isNaN { return .string("nan") }
        if seconds.isInfinite { return .string(seconds < 0 ? "-inf" : "inf") }
        guard (-62_135_596_800.0...253_402_300_799.0).contains(seconds) else { return .double(seconds) }
        return .string(formatISO8601(date))
    }

    /// ISO 8601 in UTC with milliseconds, rounded to the nearest millisecond (the formatter
    /// alone truncates, so a value read back and written again would drift). Only for dates in
    /// years 1 to 9999 (see ``dateJSON(_:)``).
    static func formatISO8601(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let seconds = (milliseconds / 1000).rounded(.down)
        let fraction = Int(milliseconds - seconds * 1000)
        if let exact = Int64(exactly: seconds), let text = ISO8601Timestamp.text(seconds: exact, milliseconds: fraction) { return text }
        return foundationISO8601(seconds: seconds, fraction: fraction)
    }

    /// ``formatISO8601(_:)`` by Foundation's formatter: for instants outside ``ISO8601Timestamp/fastRange``.
    static func foundationISO8601(seconds: Double, fraction: Int) -> String {
        let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
        let digits = String(fraction)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    static func parseISO8601(_ text: String) -> Date? {
        ISO8601Timestamp.date(parsing: text) ?? foundationParseISO8601(text)
    }

    /// ``parseISO8601(_:)`` by Foundation's parser: for every text ``ISO8601Timestamp`` does not read.
    static func foundationParseISO8601(_ text: String) -> Date? {
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return d }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

extension Dictionary where Key == String, Value == PropertyListValue {
    /// Parses a userInfo dictionary from its JSON form (an object).
    public init(userInfoJSON json: JSONValue) throws(PropertyListJSONError) {
        guard case .object = json else {
            throw PropertyListJSONError(path: "", reason: "userInfo must be a JSON object, got \(json.typeName)")
        }
        guard case .dictionary(let members) = try PropertyListValue(json: json) else {
            throw PropertyListJSONError(path: "", reason: "userInfo must be a dictionary, not a tagged value")
        }
        self = members
    }

    /// The JSON form of a userInfo dictionary (a dictionary whose only key is a tag is wrapped
    /// in `$dict`, like any nested one).
    public var userInfoJSON: JSONValue { PropertyListValue.dictionary(self).json }
}

/// Descriptions from the JSON form. The default (reflection) description prints a date with
/// `Date.description`, which traps on a NaN date (FoundationEssentials: "Double value cannot be
/// converted to Int"), so printing or logging a userInfo a peer sent could crash the process. The
/// JSON form has a text for every date (``PropertyListValue/dateJSON(_:)``). Found by
/// FuzzUserInfoDecoder (Fuzz/Crashes/FuzzUserInfoDecoder/userinfo-top-level-nan-date.bin).
extension PropertyListValue: CustomStringConvertible {
    /// The JSON form, e.g. `{"when":{"$date":"nan"}}`.
    public var description: String { json.serialized }
}

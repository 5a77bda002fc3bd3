/// An activity type: a reverse-DNS string an app declares (its `NSUserActivityTypes`), such as
/// `com.example.notes.edit`.
public struct ActivityType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The longest type accepted, in UTF-8 bytes. It must fit one TXT string with its key.
    public static let maximumLength = 200

    /// Apple's type for plain web browsing, continued in a browser when no app takes it.
    public static let browsingWeb = ActivityType(unchecked: "NSUserActivityTypeBrowsingWeb")

    public let rawValue: String

    /// Validates a reverse-DNS activity type: two or more dot-separated labels of ASCII letters,
    /// digits, `-` and `_`, the first starting with a letter; at most 200 bytes. Apple's
    /// `NSUserActivityTypeBrowsingWeb` is accepted as well.
    public init(validating text: String) throws(ActivityTypeError) {
        if text == Self.browsingWeb.rawValue { self = .browsingWeb; return }
        if let reason = Self.problem(text) { throw ActivityTypeError(text: text, reason: reason) }
        self.rawValue = text
    }

    /// What is wrong with `text` as a reverse-DNS type, the first rule it breaks in the order
    /// ``init(validating:)`` lists them (parts from the first); nil when it is valid. One pass
    /// over its bytes.
    private static func problem(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            let dot = UInt8(ascii: ".")
            guard !bytes.isEmpty else { return "it is empty" }
            guard bytes.count <= maximumLength else { return "it is longer than \(maximumLength) bytes" }
            guard bytes.contains(dot) else { return "it needs at least two dot-separated parts, like com.example.view" }
            var partStart = 0
            for index in 0...bytes.count {
                guard index < bytes.count, bytes[index] != dot else {
                    if index == partStart { return "it has an empty part (two dots in a row, or a dot at an end)" }
                    partStart = index + 1
                    continue
                }
                let byte = bytes[index]
                guard isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") else {
                    let part = UnsafeBufferPointer(rebasing: bytes[partStart..<(bytes[index...].firstIndex(of: dot) ?? bytes.count)])
                    return "part \"\(String(decoding: part, as: UTF8.self))\" may hold only ASCII letters, digits, '-' and '_'"
                }
            }
            return isLetter(bytes[0]) ? nil : "it must start with a letter"
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// Validates like ``init(validating:)`` but returns nil for an invalid type.
    public init?(rawValue: String) {
        guard let valid = try? ActivityType(validating: rawValue) else { return nil }
        self = valid
    }

    init(unchecked: String) { self.rawValue = unchecked }

    public var description: String { rawValue }
    public static func < (lhs: ActivityType, rhs: ActivityType) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// An activity type that is not valid reverse-DNS.
public struct ActivityTypeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rejected text.
    public var text: String
    /// Why it was rejected.
    public var reason: String
    public var description: String {
        "activity type \"\(text)\" is not valid reverse-DNS: \(reason)"
    }
}

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
        guard !text.isEmpty else { throw ActivityTypeError(text: text, reason: "it is empty") }
        guard text.utf8.count <= Self.maximumLength else {
            throw ActivityTypeError(text: text, reason: "it is longer than \(Self.maximumLength) bytes")
        }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else {
            throw ActivityTypeError(text: text, reason: "it needs at least two dot-separated parts, like com.example.view")
        }
        for label in labels {
            guard !label.isEmpty else { throw ActivityTypeError(text: text, reason: "it has an empty part (two dots in a row, or a dot at an end)") }
            guard label.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") }) else {
                throw ActivityTypeError(text: text, reason: "part \"\(label)\" may hold only ASCII letters, digits, '-' and '_'")
            }
        }
        guard let first = labels[0].unicodeScalars.first, first.properties.isAlphabetic else {
            throw ActivityTypeError(text: text, reason: "it must start with a letter")
        }
        self.rawValue = text
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

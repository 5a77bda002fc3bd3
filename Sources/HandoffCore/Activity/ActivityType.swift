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
        // The common case in one pass over the bytes; anything else gets the checks below, which
        // say what is wrong.
        if Self.isPlainReverseDNS(text) { self.rawValue = text; return }
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

    /// Whether `text` is valid as ``init(validating:)`` checks it: at most ``maximumLength``
    /// bytes, two or more dot-separated parts that are not empty and hold only ASCII letters,
    /// digits, `-` and `_`, the first a letter.
    private static func isPlainReverseDNS(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.count <= maximumLength, let first = bytes.first, isLetter(first) else { return false }
        var dots = 0, previous = first
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: ".") {
                guard previous != UInt8(ascii: ".") else { return false }
                dots += 1
            } else {
                guard isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") else {
                    return false
                }
            }
            previous = byte
        }
        return dots > 0 && previous != UInt8(ascii: ".")
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

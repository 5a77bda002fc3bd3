/// Where a sent file goes inside the receiver's download directory: the sender's relative path,
/// made safe. It never leaves the directory.
///
/// The path is split at `/`; empty, `.` and `..` components are dropped, so `../x` lands as `x`
/// and `/etc/x` as `etc/x`. Each remaining component is cleaned as an Inbox file name is
/// (``InboxFileName``: no control characters, no leading dots, so no hidden name such as the
/// receiver's `.handoff-partial`). A path with a NUL, too deep, or with nothing left is refused.
public struct ReceivedPath: Sendable, Hashable, CustomStringConvertible {
    /// The most directory levels a sent path may have.
    public static let maximumDepth = 32

    /// The cleaned components; the last is the file's name.
    public var components: [String]

    /// Cleans `path`; nil when it cannot name a file (a NUL, too deep, or nothing left).
    public init?(sanitizing path: String) {
        guard !path.unicodeScalars.contains("\0") else { return nil }
        let kept = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." && $0 != ".." }
        guard !kept.isEmpty, kept.count <= Self.maximumDepth else { return nil }
        components = kept.map { InboxFileName.sanitize(String($0)) }
    }

    /// The directories above the file, outermost first.
    public var directories: ArraySlice<String> { components.dropLast() }

    /// The file's name.
    public var fileName: String { components[components.count - 1] }

    public var description: String { components.joined(separator: "/") }
}

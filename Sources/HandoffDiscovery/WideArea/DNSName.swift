/// A domain name as DNS carries it (RFC 1035 §3.1): labels of 1 to 63 bytes, at most 255 bytes
/// on the wire. Written uncompressed; read with compression pointers followed.
public struct DNSName: Hashable, Sendable, CustomStringConvertible {
    /// The labels, root last omitted: `["h1", "handoff", "test"]` for `h1.handoff.test.`.
    public let labels: [String]

    /// Parses dotted text, with or without the final dot (`"handoff.test."`); `"."` is the root.
    /// Returns nil for an empty label, a label over 63 bytes or a name over 255 bytes.
    public init?(_ text: String) {
        let trimmed = text.hasSuffix(".") ? String(text.dropLast()) : text
        let labels = trimmed.isEmpty ? [] : trimmed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        self.init(labels: labels)
    }

    /// A name from labels; nil if one is empty or too long, or the whole name is.
    public init?(labels: [String]) {
        guard labels.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 63 }),
            labels.reduce(1, { $0 + 1 + $1.utf8.count }) <= 255
        else { return nil }
        self.labels = labels
    }

    /// `label` in front of this name (e.g. an instance name in front of `_handoff._tcp.DOMAIN`).
    public func prepending(_ label: String) -> DNSName? { DNSName(labels: [label] + labels) }

    /// The uncompressed wire form, final zero byte included.
    public var wire: [UInt8] {
        var bytes: [UInt8] = []
        for label in labels {
            bytes.append(UInt8(label.utf8.count))
            bytes.append(contentsOf: label.utf8)
        }
        bytes.append(0)
        return bytes
    }

    /// The wire form in lower case: what TSIG signs for key and algorithm names (RFC 8945 §4.3.3).
    public var canonicalWire: [UInt8] { DNSName(labels: labels.map { $0.lowercased() })!.wire }

    /// Dotted, with the final dot.
    public var description: String { labels.isEmpty ? "." : labels.joined(separator: ".") + "." }

    /// Same name, ignoring ASCII case (RFC 4343).
    public func matches(_ other: DNSName) -> Bool {
        labels.map { $0.lowercased() } == other.labels.map { $0.lowercased() }
    }
}

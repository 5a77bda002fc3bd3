#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A link that lasts (Apple's Quick Note links): the type and the identifiers of some content,
/// its web page and its title, but never the userInfo, the team or the device. Any host with an
/// app that declares the type continues it, long after the activity it was made from is gone.
///
/// Its text is `x-handoff:continue?v=1&type=…&persistentIdentifier=…&targetContentIdentifier=…&webpageURL=…&title=…`:
/// query items in that order, each value percent-encoded (every byte but ASCII letters, digits,
/// `-`, `.`, `_` and `~`), absent items left out. ``init(parsing:)`` reads a link strictly: a
/// link's text is untrusted input, and anything it does not expect is an error saying what.
public struct HandoffLink: Sendable, Hashable {
    /// The URL scheme, registered as `x-scheme-handler/x-handoff` by `scripts/install`.
    public static let scheme = "x-handoff"
    /// What every link starts with.
    public static let prefix = scheme + ":continue?"
    /// The format version this build writes and reads.
    public static let version = 1
    /// The longest link read, in bytes.
    public static let maximumLength = 8192
    /// The longest identifier or title, in UTF-8 bytes.
    public static let maximumFieldBytes = 1024

    public let activityType: ActivityType
    /// The app's stable identifier for the content (`persistentIdentifier`).
    public let persistentIdentifier: String?
    /// Identifies the content within the app (`targetContentIdentifier`).
    public let targetContentIdentifier: String?
    /// The content on the web: an http or https URL, opened when no app continues the link.
    public let webpageURL: URL?
    public let title: String?

    /// A link to this content. It must name the content some way: a persistentIdentifier, a
    /// targetContentIdentifier or a webpageURL (http or https).
    public init(activityType: ActivityType, persistentIdentifier: String? = nil, targetContentIdentifier: String? = nil,
                webpageURL: URL? = nil, title: String? = nil) throws(HandoffLinkError) {
        func field(_ name: String, _ value: String?) throws(HandoffLinkError) -> String? {
            guard let value else { return nil }
            guard !value.isEmpty else { throw HandoffLinkError("\(name) is empty") }
            guard value.utf8.count <= Self.maximumFieldBytes else { throw HandoffLinkError("\(name) is longer than \(Self.maximumFieldBytes) bytes") }
            return value
        }
        self.activityType = activityType
        self.persistentIdentifier = try field("persistentIdentifier", persistentIdentifier)
        self.targetContentIdentifier = try field("targetContentIdentifier", targetContentIdentifier)
        self.title = try field("title", title)
        if let webpageURL {
            guard let scheme = webpageURL.scheme?.lowercased(), ["http", "https"].contains(scheme), !(webpageURL.host ?? "").isEmpty else {
                throw HandoffLinkError("webpageURL must be an http or https URL with a host, not \(webpageURL.absoluteString)")
            }
            _ = try field("webpageURL", webpageURL.absoluteString)
        }
        self.webpageURL = webpageURL
        guard self.persistentIdentifier != nil || self.targetContentIdentifier != nil || webpageURL != nil else {
            throw HandoffLinkError("it names no content: it needs a persistentIdentifier, a targetContentIdentifier or a webpageURL "
                + "(publish the activity with --persistent-id ID or --webpage-url URL)")
        }
    }

    /// A link to an activity's content; its userInfo is left behind.
    public init(_ activity: Activity) throws(HandoffLinkError) {
        try self.init(activityType: activity.activityType, persistentIdentifier: activity.persistentIdentifier,
                      targetContentIdentifier: activity.targetContentIdentifier, webpageURL: activity.webpageURL, title: activity.title)
    }

    /// The link's text.
    public var text: String {
        var items = [("v", String(Self.version)), ("type", activityType.rawValue)]
        if let persistentIdentifier { items.append(("persistentIdentifier", persistentIdentifier)) }
        if let targetContentIdentifier { items.append(("targetContentIdentifier", targetContentIdentifier)) }
        if let webpageURL { items.append(("webpageURL", webpageURL.absoluteString)) }
        if let title { items.append(("title", title)) }
        return Self.prefix + items.map { "\($0)=\(Self.percentEncoded($1))" }.joined(separator: "&")
    }

    /// The activity a continued link hands to an app: a new ID, the link's fields, an empty userInfo.
    public var activity: Activity {
        Activity(activityType: activityType, title: title, targetContentIdentifier: targetContentIdentifier,
                 persistentIdentifier: persistentIdentifier, webpageURL: webpageURL)
    }

    /// Whether `text` is meant as a link (it starts with the scheme), valid or not.
    public static func looksLikeLink(_ text: String) -> Bool {
        text.lowercased().hasPrefix(scheme + ":")
    }

    /// Reads a link's text strictly.
    ///
    /// - Throws: ``HandoffLinkError`` saying what is wrong: another scheme or form, a character
    ///   a link never holds, a bad percent escape, an unknown, repeated or empty item, another
    ///   version, an invalid type or web page URL, or no content named.
    public init(parsing text: String) throws(HandoffLinkError) {
        guard text.utf8.count <= Self.maximumLength else { throw HandoffLinkError("it is longer than \(Self.maximumLength) bytes") }
        guard text.lowercased().hasPrefix(Self.prefix) else {
            throw HandoffLinkError(Self.looksLikeLink(text) ? "it must start with \(Self.prefix) (as `handoff link` prints it)"
                : "it must start with \(Self.scheme): (a link as `handoff link` prints it)")
        }
        let query = text.utf8.dropFirst(Self.prefix.utf8.count)
        if let bad = query.firstIndex(where: { !Self.queryBytes.contains($0) }) {
            let position = text.utf8.distance(from: text.utf8.startIndex, to: bad) + 1
            throw HandoffLinkError("it holds a character a link never does at byte \(position) (a link is ASCII, with percent-encoded values)")
        }
        var values: [String: String] = [:]
        for item in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            let parts = item.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(decoding: parts[0], as: UTF8.self)
            guard parts.count == 2, !name.isEmpty else { throw HandoffLinkError("each item must be NAME=VALUE, not \"\(String(decoding: item, as: UTF8.self))\"") }
            guard Self.itemNames.contains(name) else {
                throw HandoffLinkError("unknown item \"\(name)\"; a link has \(Self.itemNames.joined(separator: ", "))")
            }
            guard values[name] == nil else { throw HandoffLinkError("item \"\(name)\" appears twice") }
            guard !parts[1].contains(UInt8(ascii: "=")) else { throw HandoffLinkError("the value of \(name) holds an unencoded '='") }
            values[name] = try Self.percentDecoded(parts[1], item: name)
        }
        guard let version = values["v"] else { throw HandoffLinkError("it has no version (v=\(Self.version))") }
        guard version == String(Self.version) else {
            throw HandoffLinkError("it is version \(version) of the link format; this handoff reads version \(Self.version) (update handoff)")
        }
        guard let typeText = values["type"] else { throw HandoffLinkError("it has no activity type (type=…)") }
        let type: ActivityType
        do { type = try ActivityType(validating: typeText) } catch { throw HandoffLinkError("its type is not valid: \(error.reason)") }
        var url: URL?
        if let urlText = values["webpageURL"] {
            guard let parsed = URL(string: urlText), parsed.absoluteString == urlText else {
                throw HandoffLinkError("its webpageURL is not a valid URL")
            }
            url = parsed
        }
        try self.init(activityType: type, persistentIdentifier: values["persistentIdentifier"],
                      targetContentIdentifier: values["targetContentIdentifier"], webpageURL: url, title: values["title"])
    }

    private static let itemNames = ["v", "type", "persistentIdentifier", "targetContentIdentifier", "webpageURL", "title"]

    /// The bytes left as they are when encoding: RFC 3986's unreserved characters.
    private static let unreserved: Set<UInt8> = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8))
    /// The bytes a link's query may hold: RFC 3986's query characters (`#` ends a query: a link has no fragment).
    private static let queryBytes: Set<UInt8> = unreserved.union("%!$&'()*+,;=:@/?".utf8)

    private static func percentEncoded(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            if unreserved.contains(byte) { out.unicodeScalars.append(Unicode.Scalar(byte)) } else { out += "%" + hex(byte) }
        }
        return out
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    private static func percentDecoded(_ encoded: Substring.UTF8View.SubSequence, item: String) throws(HandoffLinkError) -> String {
        var bytes: [UInt8] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let byte = encoded[index]
            if byte == UInt8(ascii: "%") {
                let first = encoded.index(after: index)
                guard first < encoded.endIndex, encoded.index(after: first) < encoded.endIndex,
                      let high = hexValue(encoded[first]), let low = hexValue(encoded[encoded.index(after: first)]) else {
                    throw HandoffLinkError("the value of \(item) has a '%' not followed by two hex digits")
                }
                bytes.append(high << 4 | low)
                index = encoded.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = encoded.index(after: index)
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw HandoffLinkError("the value of \(item) is not UTF-8 text") }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw HandoffLinkError("the value of \(item) holds a control character")
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A link that cannot be made or read; ``description`` says what is wrong.
public struct HandoffLinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `unknown item "userInfo"; a link has v, type, …`.
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "not a usable handoff link: \(reason)" }
}

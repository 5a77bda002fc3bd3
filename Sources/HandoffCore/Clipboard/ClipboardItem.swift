#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ActivityType {
    /// The reserved type of a Universal Clipboard item (`handoff copy`). Only the clipboard path
    /// publishes it; `publish` of this type by a person or an app is refused.
    public static let clipboard = ActivityType(unchecked: "org.handoff.clipboard")

    /// Whether this is the reserved clipboard type.
    public var isClipboard: Bool { self == .clipboard }
}

/// What a clipboard item is, without its contents: its MIME type, its size and the SHA-256 of its
/// bytes. The item's activity carries it as userInfo (`mimeType`, `size`, `sha256`); the source
/// sends it again in a `clipboardItem` frame before the contents.
public struct ClipboardItemInfo: Sendable, Hashable {
    /// The MIME type the copier gave, such as `text/plain` (the default) or `image/png`.
    public var mimeType: String
    /// The number of bytes.
    public var size: Int
    /// The SHA-256 of the bytes, 64 lower-case hexadecimal digits.
    public var sha256: String

    /// The MIME type of `handoff copy` without `--type`.
    public static let defaultMimeType = "text/plain"

    public init(mimeType: String, size: Int, sha256: String) {
        self.mimeType = mimeType
        self.size = size
        self.sha256 = sha256
    }

    /// Why a MIME type cannot be used (nil: it can): `type/subtype`, printable ASCII, at most
    /// 127 bytes, as X11 targets and Wayland MIME types are.
    public static func mimeTypeProblem(_ text: String) -> String? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard text.utf8.count <= 127, parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
            text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
        else { return "\(text) is not a MIME type such as text/plain or image/png" }
        return nil
    }

    /// The fields as a property-list dictionary (the activity's userInfo, the frame's payload).
    public var propertyList: UserInfo {
        ["mimeType": .string(mimeType), "size": .integer(Int64(size)), "sha256": .string(sha256)]
    }

    /// Reads the fields; nil when one is missing or malformed.
    public init?(propertyList fields: UserInfo) {
        guard case .string(let mimeType)? = fields["mimeType"], Self.mimeTypeProblem(mimeType) == nil,
            case .integer(let size)? = fields["size"], size >= 0,
            case .string(let sha256)? = fields["sha256"], sha256.utf8.count == 64, sha256.allSatisfy(\.isHexDigit)
        else { return nil }
        self.init(mimeType: mimeType, size: Int(clamping: size), sha256: sha256.lowercased())
    }

    /// The JSON form (`copy`'s answer, `paste`'s header).
    public var json: JSONValue {
        .object(["type": .string(mimeType), "size": .integer(size), "sha256": .string(sha256)])
    }

    /// Reads the JSON form; nil when a field is missing.
    public init?(json: JSONValue) {
        guard let mimeType = json["type"]?.stringValue, let size = json["size"]?.int64Value, let sha256 = json["sha256"]?.stringValue else { return nil }
        self.init(mimeType: mimeType, size: Int(clamping: size), sha256: sha256)
    }
}

/// The answer to `copy`: the item now offered, and until when.
public struct CopyResult: ControlResult, Equatable {
    /// The item's activity ID.
    public var id: UUID?
    public var item: ClipboardItemInfo?
    /// When the item stops being offered.
    public var expires: String

    public init(id: UUID, item: ClipboardItemInfo, expires: Date) {
        self.id = id
        self.item = item
        self.expires = expires.formatted(Date.ISO8601FormatStyle())
    }

    public var json: JSONValue {
        var body = item?.json.objectValue ?? [:]
        if let id { body["id"] = .string(id.uuidString) }
        body["expires"] = .string(expires)
        return .object(body)
    }

    public init(json: JSONValue) {
        id = json.uuid("id")
        item = ClipboardItemInfo(json: json)
        expires = json.text("expires")
    }
}

/// The header of `paste`'s answer: the item, and the device it comes from; its bytes follow as
/// stream frames on the control connection.
public struct PasteHeader: ControlResult, Equatable {
    public var item: ClipboardItemInfo?
    /// The source device, by the name this host stored when pairing.
    public var peer: String

    public init(item: ClipboardItemInfo, peer: String) {
        self.item = item
        self.peer = peer
    }

    public var json: JSONValue {
        var body = item?.json.objectValue ?? [:]
        body["peer"] = .string(peer)
        return .object(body)
    }

    public init(json: JSONValue) {
        item = ClipboardItemInfo(json: json)
        peer = json.text("peer")
    }
}

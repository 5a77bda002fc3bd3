#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an agent's DNS-SD TXT record says: the protocol version, the agent ID, a sequence number
/// of its activity set, and its current activity (ID, type and title).
///
/// TXT keys: `v` (protocol version), `id` (agent ID), `seq` (sequence number), `name` (the agent's
/// name, when given), and, when an
/// activity is current, `aid` (activity ID), `type`, `title` and, when an app published it, `tid`
/// (the app's team ID), and `cid`, the ID of the device's clipboard item while one is offered
/// (`handoff copy`). The title is truncated (on a
/// character boundary) so the whole record stays within ``maximumRecordSize``.
public struct ActivityAdvertisement: Sendable, Hashable {
    /// The largest TXT record an agent publishes, in bytes.
    public static let maximumRecordSize = 1300

    /// The current activity as advertised.
    public struct Current: Sendable, Hashable {
        public var id: UUID
        public var activityType: ActivityType
        public var title: String?
        /// The team ID of the app that published it; nil when published without an app (CLI).
        public var teamID: String?

        public init(id: UUID, activityType: ActivityType, title: String?, teamID: String? = nil) {
            self.id = id
            self.activityType = activityType
            self.title = title
            self.teamID = teamID
        }
    }

    public var protocolVersion: Int
    public var agentID: String
    public var sequence: UInt64
    public var current: Current?
    /// The agent's name (`name`), for people: its DNS-SD instance name is opaque.
    public var name: String?
    /// The activity ID of the device's clipboard item (`cid`), while one is offered.
    public var clipboard: UUID?

    public init(protocolVersion: Int = PeerHello.supportedVersions.max()!, agentID: String, sequence: UInt64, current: Current?,
                name: String? = nil, clipboard: UUID? = nil) {
        self.clipboard = clipboard
        self.protocolVersion = protocolVersion
        self.agentID = agentID
        self.sequence = sequence
        self.current = current
        self.name = name
    }

    /// The TXT rdata: each `key=value` string prefixed by its length byte.
    public var txtRecord: [UInt8] { txtRecord(maximumSize: Self.maximumRecordSize) }

    /// The TXT rdata, the title truncated so the record stays within `maximumSize` bytes (an
    /// advertisement sealed for paired peers has less room than a plain one).
    public func txtRecord(maximumSize: Int) -> [UInt8] {
        var strings: [[UInt8]] = [
            Array("v=\(protocolVersion)".utf8),
            Array("id=\(agentID)".utf8),
            Array("seq=\(sequence)".utf8),
        ]
        if let name { strings.append(Array("name=\(TXTRecordEncoding.truncate(name, toUTF8Bytes: 64))".utf8)) }
        if let clipboard { strings.append(Array("cid=\(clipboard.uuidString)".utf8)) }
        if let current {
            strings.append(Array("aid=\(current.id.uuidString)".utf8))
            strings.append(Array("type=\(current.activityType.rawValue)".utf8))
            if let teamID = current.teamID { strings.append(Array("tid=\(teamID)".utf8)) }
        }
        let used = strings.reduce(0) { $0 + 1 + $1.count }
        if let title = current?.title {
            let budget = min(255, maximumSize - used - 1) - "title=".utf8.count
            if budget > 0 {
                strings.append(Array("title=\(TXTRecordEncoding.truncate(title, toUTF8Bytes: budget))".utf8))
            }
        }
        return TXTRecordEncoding.rdata(strings)
    }

    /// Reads an advertisement from TXT rdata. Refuses records that are not a handoff agent's
    /// (no `v`/`id`), of a version this build does not speak, or malformed.
    public init(txtRecord: [UInt8]) throws(AdvertisementError) {
        let fields = try Self.parseTXT(txtRecord)
        guard let versionText = fields["v"], let version = Int(versionText) else { throw .notAHandoffAgent("no protocol version (v)") }
        guard PeerHello.supportedVersions.contains(version) else { throw .unsupportedVersion(version) }
        guard let agentID = fields["id"], !agentID.isEmpty, agentID.utf8.count <= 64 else { throw .notAHandoffAgent("no agent ID (id)") }
        guard let seqText = fields["seq"], let sequence = UInt64(seqText) else { throw .malformed("seq is missing or not a number") }
        var current: Current?
        if let aidText = fields["aid"] {
            guard let aid = UUID(uuidString: aidText) else { throw .malformed("aid is not a UUID") }
            guard let typeText = fields["type"], let type = ActivityType(rawValue: typeText) else {
                throw .malformed("type is missing or not reverse-DNS")
            }
            let teamID = fields["tid"]
            guard teamID.map({ !$0.isEmpty && $0.utf8.count <= 64 }) ?? true else { throw .malformed("tid is empty or too long") }
            current = Current(id: aid, activityType: type, title: fields["title"], teamID: teamID)
        }
        let name = fields["name"].flatMap { $0.isEmpty || $0.utf8.count > 64 ? nil : $0 }
        var clipboard: UUID?
        if let cidText = fields["cid"] {
            guard let cid = UUID(uuidString: cidText) else { throw .malformed("cid is not a UUID") }
            clipboard = cid
        }
        self.init(protocolVersion: version, agentID: agentID, sequence: sequence, current: current, name: name, clipboard: clipboard)
    }

    /// Splits TXT rdata into keys (lower-cased) and values. Per RFC 6763 a key's first occurrence
    /// wins and strings without `=` are boolean attributes (ignored here).
    static func parseTXT(_ bytes: [UInt8]) throws(AdvertisementError) -> [String: String] {
        var fields: [String: String] = [:]
        var i = 0
        while i < bytes.count {
            let length = Int(bytes[i])
            i += 1
            guard length <= bytes.count - i else { throw .malformed("TXT string runs past the end of the record") }
            let string = bytes[i..<(i + length)]
            i += length
            guard let eq = string.firstIndex(of: UInt8(ascii: "=")), eq > string.startIndex else { continue }
            guard let key = String(validating: string[string.startIndex..<eq], as: UTF8.self)?.lowercased(),
                let value = String(validating: string[(eq + 1)...], as: UTF8.self)
            else { throw .malformed("TXT string is not UTF-8") }
            if fields[key] == nil { fields[key] = value }
        }
        return fields
    }
}

/// A TXT record that is not a usable handoff advertisement.
public enum AdvertisementError: Error, Sendable, Hashable, CustomStringConvertible {
    case notAHandoffAgent(String)
    case unsupportedVersion(Int)
    case malformed(String)

    public var description: String {
        switch self {
        case .notAHandoffAgent(let why): "not a handoff agent: \(why)"
        case .unsupportedVersion(let v): "advertises protocol version \(v), which this agent does not speak"
        case .malformed(let why): "malformed advertisement: \(why)"
        }
    }
}

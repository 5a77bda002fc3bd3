#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The newest advertisement accepted from each paired device, so that a replayed record is
/// recognised, also after the agent restarts.
///
/// A device signs a timestamp into every record (``SealedAdvertisement``) and never signs two
/// records with the same one. A record is taken when its timestamp is newer than the last one
/// taken from the device, or when it is that very record again on the same DNS-SD instance name
/// (Avahi resolves an instance again whenever its cache refreshes; that must not count as a
/// replay). Anything else is a replay: an older record, or the current one under another name.
///
/// A value; persisted as `seen-advertisements.json` (mode 0600, replaced atomically) in the
/// agent's state directory:
///
/// ```json
/// {"version": 1, "devices": {"P56IOI7-…": {"timestamp": 1746100800123, "instanceName": "handoff-0123456789ab"}}}
/// ```
public struct SeenAdvertisements: Sendable, Hashable {
    /// The file name in the state directory.
    public static let fileName = "seen-advertisements.json"
    /// The version of the file format this build reads and writes.
    public static let formatVersion = 1

    /// The last record taken from a device.
    public struct Last: Sendable, Hashable, Codable {
        /// Its signed timestamp.
        public var timestamp: UInt64
        /// The instance name it was published under.
        public var instanceName: String

        /// Creates a last-seen entry.
        public init(timestamp: UInt64, instanceName: String) {
            self.timestamp = timestamp
            self.instanceName = instanceName
        }
    }

    /// What ``admit(_:timestamp:instanceName:)`` decided.
    public enum Verdict: Sendable, Hashable {
        /// Newer than anything taken from the device: take it (the state changed; save it).
        case fresh
        /// The record taken last, resolved again on the same instance: take it (nothing changed).
        case sameRecord
        /// Not newer than the last record taken (with that timestamp): ignore it.
        case replay(last: Last)
    }

    /// The last record taken from each device.
    public private(set) var last: [DeviceID: Last]

    /// An empty state: nothing seen yet.
    public init(last: [DeviceID: Last] = [:]) { self.last = last }

    /// Decides whether a verified record of `id` with `timestamp`, published under
    /// `instanceName`, is taken, and records it when it is fresh.
    public mutating func admit(_ id: DeviceID, timestamp: UInt64, instanceName: String) -> Verdict {
        if let previous = last[id] {
            if timestamp == previous.timestamp, instanceName == previous.instanceName { return .sameRecord }
            guard timestamp > previous.timestamp else { return .replay(last: previous) }
        }
        last[id] = Last(timestamp: timestamp, instanceName: instanceName)
        return .fresh
    }

    /// Forgets a device (it was unpaired). Returns whether anything was known of it.
    @discardableResult
    public mutating func forget(_ id: DeviceID) -> Bool {
        last.removeValue(forKey: id) != nil
    }

    // MARK: Persistence

    private struct File: Codable {
        var version: Int
        var devices: [String: Last]
    }

    /// Reads `seen-advertisements.json` in `directory`; an empty state when there is none.
    ///
    /// - Throws: ``TrustStoreError`` naming the file and saying what to do when it cannot be read
    ///   or is corrupt.
    public static func load(directory: String) throws(TrustStoreError) -> SeenAdvertisements {
        let path = PrivateFiles.join(directory, fileName)
        guard let bytes = try PrivateFiles.contents(path) else { return SeenAdvertisements() }
        let recover = "remove it (paired devices' next advertisements are then taken as new)"
        guard let file = try? JSONDecoder().decode(File.self, from: Data(bytes)) else {
            throw TrustStoreError("\(path) is corrupt (not the JSON of seen advertisements): \(recover)")
        }
        guard file.version == formatVersion else {
            throw TrustStoreError("\(path) has format version \(file.version), but this handoff reads version \(formatVersion): \(recover)")
        }
        var state = SeenAdvertisements()
        for (text, entry) in file.devices {
            guard let id = try? DeviceID(parsing: text) else {
                throw TrustStoreError("\(path) is corrupt (\"\(text.prefix(80))\" is not a device ID): \(recover)")
            }
            state.last[id] = entry
        }
        return state
    }

    /// Writes `seen-advertisements.json` in `directory` atomically (a new file of mode 0600,
    /// synced, renamed over the old one). Creates `directory` (mode 0700) if needed.
    ///
    /// - Throws: ``TrustStoreError`` naming the file when it cannot be written.
    public func save(directory: String) throws(TrustStoreError) {
        try PrivateFiles.createDirectory(directory)
        let file = File(version: Self.formatVersion, devices: Dictionary(uniqueKeysWithValues: last.map { ($0.key.description, $0.value) }))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and integers cannot fail.
        let bytes = ((try? encoder.encode(file)).map(Array.init) ?? []) + [UInt8(ascii: "\n")]
        try PrivateFiles.writeAtomically(bytes, to: PrivateFiles.join(directory, Self.fileName))
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The settings a person changes at run time and expects to outlast a restart, as Apple's
/// "Allow Handoff" switch: whether handoff is paused on this device (`handoff pause`).
///
/// A value; persisted as `settings.json` (mode 0600, replaced atomically) in the agent's state
/// directory:
///
/// ```json
/// {"version": 1, "paused": true}
/// ```
public struct DeviceSettings: Sendable, Hashable, Codable {
    /// The file name in the state directory.
    public static let fileName = "settings.json"
    /// The version of the file format this build reads and writes.
    public static let formatVersion = 1

    /// Paused: this device advertises no activity, serves none, and shows no notifications.
    public var paused: Bool

    /// The settings of a new device: handoff on.
    public init(paused: Bool = false) { self.paused = paused }

    private struct File: Codable {
        var version: Int
        var paused: Bool?
    }

    /// Reads `settings.json` in `directory`; the defaults when there is none.
    ///
    /// - Throws: ``TrustStoreError`` naming the file and saying what to do when it cannot be read
    ///   or is corrupt.
    public static func load(directory: String) throws(TrustStoreError) -> DeviceSettings {
        let path = PrivateFiles.join(directory, fileName)
        guard let bytes = try PrivateFiles.contents(path) else { return DeviceSettings() }
        let recover = "remove it (handoff then starts resumed; `handoff pause` pauses it again)"
        guard let file = try? JSONDecoder().decode(File.self, from: Data(bytes)) else {
            throw TrustStoreError("\(path) is corrupt (not the JSON of handoff's settings): \(recover)")
        }
        guard file.version == formatVersion else {
            throw TrustStoreError("\(path) has format version \(file.version), but this handoff reads version \(formatVersion): \(recover)")
        }
        return DeviceSettings(paused: file.paused ?? false)
    }

    /// Writes `settings.json` in `directory` atomically (a new file of mode 0600, synced, renamed
    /// over the old one). Creates `directory` (mode 0700) if needed.
    public func save(directory: String) throws(TrustStoreError) {
        try PrivateFiles.createDirectory(directory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let bytes = ((try? encoder.encode(File(version: Self.formatVersion, paused: paused))).map(Array.init) ?? []) + [UInt8(ascii: "\n")]
        try PrivateFiles.writeAtomically(bytes, to: PrivateFiles.join(directory, Self.fileName))
    }
}

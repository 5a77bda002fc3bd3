import HandoffCore
import HandoffTrust

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The activities published without an app (`handoff publish`), kept in the agent's state
/// directory so that they outlive an agent restart: the CLI that published them is gone and
/// cannot publish them again. Apps' activities are not kept: a running HandoffKit app publishes
/// its own again when it reconnects, and the activity of an app that died must not come back.
/// Clipboard items (`handoff copy`) are not kept either.
///
/// `published-activities.json`, mode 0600, replaced atomically, oldest activity first, each in
/// the JSON form of ``Activity/json`` (so each keeps its ID). It is written for an agent restart
/// or crash, not for a power loss (``PrivateFiles/Durability/processRestart``: no fsync, which
/// was about 40 % of each write's CPU); after a power loss the agent may start with the
/// activities of the file before, or with none (an empty file is moved aside as unreadable):
///
/// ```json
/// {"version": 1, "activities": [{"id": "…", "activityType": "com.example.view", …}]}
/// ```
public struct PublishedActivitiesFile: Sendable, Equatable {
    /// The file name in the state directory.
    public static let fileName = "published-activities.json"
    /// The version of the file format this build reads and writes.
    public static let formatVersion = 1

    /// The file's path.
    public let path: String

    /// The file in the agent's state directory.
    public init(stateDirectory: String) {
        path = stateDirectory.hasSuffix("/") ? stateDirectory + Self.fileName : stateDirectory + "/" + Self.fileName
    }

    /// What ``load(now:)`` found.
    public enum Loaded: Sendable, Equatable {
        /// The activities to hold again, oldest first, the expired ones dropped (none when there
        /// is no file).
        case activities([Activity])
        /// A file this build cannot read (corrupt, another version, refused): moved to `movedTo`
        /// (nil if even that failed), so the agent starts with none.
        case unreadable(reason: String, movedTo: String?)
    }

    /// Which of a store's activities outlive a restart: those published without an app, except
    /// clipboard items; oldest first.
    public static func kept(in store: ActivityStore) -> [Activity] {
        store.all.filter { store.owner(of: $0.id) == nil && !$0.activityType.isClipboard }
    }

    /// Reads the file. One that cannot be used is moved aside (to
    /// `published-activities.json.unreadable-<time>`), never deleted.
    public func load(now: Date) -> Loaded {
        let reason: String
        do {
            guard let bytes = try PrivateFiles.contents(path) else { return .activities([]) }
            return .activities(try Self.decode(bytes).filter { !$0.isExpired(at: now) })
        } catch let error as HandoffError {
            reason = error.message
        } catch {
            reason = "\(error)"
        }
        return .unreadable(reason: reason, movedTo: PrivateFiles.moveAside(path, at: Int64(now.timeIntervalSince1970)))
    }

    /// Writes `activities` in place of the file; with none, removes it.
    public func save(_ activities: [Activity]) throws(HandoffError) {
        do {
            guard !activities.isEmpty else {
                if unlink(path) != 0, errno != ENOENT { throw HandoffError.handoffFailed("cannot remove \(path): \(String(cString: strerror(errno)))") }
                return
            }
            try PrivateDirectory.create(PrivateDirectory.parent(of: path), purpose: "the state directory")
            try PrivateFiles.writeAtomically(Self.encode(activities), to: path, durability: .processRestart)
        } catch let error as HandoffError {
            throw error
        } catch {
            throw .handoffFailed("cannot keep the published activities in \(path): \(error)")
        }
    }

    /// The file's bytes for `activities`.
    static func encode(_ activities: [Activity]) -> [UInt8] {
        let file: JSONValue = .object(["version": .integer(Int64(formatVersion)), "activities": .array(activities.map(\.json))])
        return file.serializedBytes + [UInt8(ascii: "\n")]
    }

    /// The activities in the file's bytes.
    static func decode(_ bytes: [UInt8]) throws(HandoffError) -> [Activity] {
        let file: JSONValue
        do { file = try JSONValue(parsing: bytes) } catch { throw .handoffFailed("not JSON: \(error)") }
        guard let version = file["version"]?.int64Value else { throw .handoffFailed("no format version") }
        guard version == formatVersion else {
            throw .handoffFailed("format version \(version), but this handoff reads version \(formatVersion)")
        }
        guard case .array(let members)? = file["activities"] else { throw .handoffFailed("no list of activities") }
        do {
            return try members.map { json throws(ActivityDecodingError) in try Activity(json: json) }
        } catch {
            throw .handoffFailed("an activity that cannot be read: \(error)")
        }
    }
}

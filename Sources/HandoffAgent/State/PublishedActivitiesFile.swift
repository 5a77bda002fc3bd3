import HandoffCore
import HandoffTrust

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
/// Kept as two slots written in turn, `published-activities.0` and `published-activities.1`,
/// mode 0600 (``AlternatingFile``: each publish and resign overwrites the older slot, with no new
/// file and no rename; the newest whole slot is read). Each slot's content is, oldest activity
/// first, each in the JSON form of ``Activity/json`` (so each keeps its ID):
///
/// ```json
/// {"version": 1, "activities": [{"id": "…", "activityType": "com.example.view", …}]}
/// ```
///
/// Earlier versions kept the same JSON in `published-activities.json`, replaced by a rename at
/// each write; it is read while no slot exists and removed once one is written. The slots are
/// written for an agent restart or crash, not for a power loss (no fsync); after a power loss the
/// agent may start with the activities of a write before, or with none (a slot that cannot be
/// read is moved aside).
public struct PublishedActivitiesFile: Sendable, Equatable {
    /// The slots' name in the state directory, before `.0` and `.1`.
    public static let fileName = "published-activities"
    /// The single file earlier versions kept, read while no slot exists.
    public static let legacyFileName = "published-activities.json"
    /// The version of the content's format this build reads and writes.
    public static let formatVersion = 1

    /// The slots' path, before `.0` and `.1`.
    public let path: String
    private let slots: AlternatingFile

    /// The file in the agent's state directory.
    public init(stateDirectory: String) {
        let directory = stateDirectory.hasSuffix("/") ? stateDirectory : stateDirectory + "/"
        path = directory + Self.fileName
        slots = AlternatingFile(path: path, legacy: directory + Self.legacyFileName)
    }

    public static func == (a: Self, b: Self) -> Bool { a.path == b.path }

    /// The paths of the two slots.
    public var slotPaths: [String] { slots.slots }

    /// What ``load(now:)`` found.
    public enum Loaded: Sendable, Equatable {
        /// The activities to hold again, oldest first, the expired ones dropped (none when there
        /// is no file).
        case activities([Activity])
        /// Slots this build cannot read (corrupt, another version, refused): moved to `movedTo`
        /// (empty if even that failed), so the agent starts with none.
        case unreadable(reason: String, movedTo: [String])
    }

    /// Which of a store's activities outlive a restart: those published without an app, except
    /// clipboard items; oldest first.
    public static func kept(in store: ActivityStore) -> [Activity] {
        store.all.filter { store.owner(of: $0.id) == nil && !$0.activityType.isClipboard }
    }

    /// Reads the newest whole slot. Slots that cannot be used are moved aside (to
    /// `published-activities.0.unreadable-<time>` and so on), never deleted.
    public func load(now: Date) -> Loaded {
        let reason: String
        do {
            guard let bytes = try slots.read() else { return .activities([]) }
            return .activities(try Self.decode(bytes).filter { !$0.isExpired(at: now) })
        } catch let error as HandoffError {
            reason = error.message
        } catch {
            reason = "\(error)"
        }
        return .unreadable(reason: reason, movedTo: slots.moveAside(at: Int64(now.timeIntervalSince1970)))
    }

    /// Writes `activities` (none: an empty list) over the older slot. The state directory, which
    /// the agent made and checked at its start, is made again (and checked) only when a write
    /// fails: removed while the agent runs, it comes back at the next write.
    public func save(_ activities: [Activity]) throws(HandoffError) {
        let bytes = Self.encode(activities)
        do {
            do { try slots.write(bytes) } catch {
                try PrivateDirectory.create(PrivateDirectory.parent(of: path), purpose: "the state directory")
                try slots.write(bytes)
            }
        } catch let error as HandoffError {
            throw error
        } catch {
            throw .handoffFailed("cannot keep the published activities in \(path).0 or .1: \(error)")
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

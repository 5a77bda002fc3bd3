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

/// Where an app's preserved state lives: `restoration.plist` (a ``RestorationArchive``, mode 0600,
/// replaced atomically) in `$XDG_STATE_HOME/handoff/apps/<bundleID>/`, else
/// `$HOME/.local/state/handoff/apps/<bundleID>/`, unless the app names another file.
public struct RestorationStateFile: Sendable, Equatable {
    /// The file's path; empty when neither `XDG_STATE_HOME` nor `HOME` is set (state is then
    /// neither saved nor restored).
    public var path: String

    /// The file at `path`.
    public init(path: String) { self.path = path }

    /// The default file for the app with this bundle ID.
    public init(bundleID: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].flatMap { $0.isEmpty ? nil : $0 + "/.local/state" }
        path = home.map { "\($0)/handoff/apps/\(bundleID)/restoration.plist" } ?? ""
    }

    /// What ``load()`` found.
    public enum Loaded: Sendable {
        /// No saved state: a fresh start.
        case none
        /// The saved state.
        case state(RestorationCoder)
        /// A file that is not state this library can read (corrupt, another version, refused):
        /// moved to `movedTo` (nil if even that failed), so the app starts fresh.
        case unreadable(reason: String, movedTo: String?)
    }

    /// Reads the saved state. A file that cannot be used is moved aside (to
    /// `restoration.plist.unreadable-<time>`), never deleted.
    public func load(now: Date = Date()) -> Loaded {
        guard !path.isEmpty else { return .none }
        let reason: String
        do {
            guard let bytes = try PrivateFiles.contents(path) else { return .none }
            return .state(try RestorationArchive.decode(bytes))
        } catch let error as RestorationArchiveError {
            reason = error.reason
        } catch {
            reason = "\(error)"
        }
        return .unreadable(reason: reason, movedTo: PrivateFiles.moveAside(path, at: Int64(now.timeIntervalSince1970)))
    }

    /// Writes `coder` in place of the saved state, creating the directory (mode 0700) if needed.
    public func save(_ coder: RestorationCoder) throws(HandoffError) {
        guard !path.isEmpty else {
            throw .handoffFailed("no place to save the application state: set XDG_STATE_HOME or HOME, or give HandoffApplication a restorationStatePath")
        }
        do {
            try PrivateDirectory.create(PrivateDirectory.parent(of: path), purpose: "the application state directory")
            try PrivateFiles.writeAtomically(RestorationArchive.encode(coder), to: path)
        } catch {
            throw .handoffFailed("cannot save the application state to \(path): \(error)")
        }
    }
}

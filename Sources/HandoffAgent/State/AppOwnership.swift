import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which control connection may act for which app, and on what. Pure rules; the agent applies
/// them.
///
/// - A bundle ID is registered by one live connection at a time: a second `registerApp` with it
///   from another connection is refused until the first closes, and a connection that registered
///   one app cannot become another.
/// - An app's activity is replaced (`publish` with its ID) or resigned only over the connection
///   that published it (``ActivityStore/mayChange(_:by:)``); an event's reply is accepted only
///   from the connection the event was sent to.
///
/// What this does not do: a process of the same user that connects first may register any
/// bundle and team ID (the agent cannot tell which executable an app is; see the security notes),
/// so these rules stop one app from taking over another that is running, not an impostor that
/// runs instead of it.
public enum AppOwnership {
    /// Why `manifest` may not be registered on `connection`, given the apps registered now by
    /// connection; nil when it may.
    public static func refusal(_ manifest: AppManifest, on connection: UUID, registered: [UUID: AppManifest]) -> HandoffError? {
        let bundleID = manifest.identity.bundleID
        if let current = registered[connection], current.identity.bundleID != bundleID {
            return .handoffFailed(
                "registerApp: this connection is already the app \(current.identity.bundleID); open another connection to register \(bundleID)")
        }
        if registered.contains(where: { $0.key != connection && $0.value.identity.bundleID == bundleID }) {
            return .handoffFailed(
                "registerApp: \(bundleID) is already registered by another running process; quit it first (each bundle ID runs once per user), or use the app's own bundle ID")
        }
        return nil
    }

    /// The error for a connection acting on something another connection owns: `verb` is
    /// `replace`, `resign` or `answer`.
    static func notYours(_ id: UUID, _ verb: String) -> HandoffError {
        switch verb {
        case "answer":
            return .handoffFailed("reply \(id) answers an event sent to another connection; only the app that received the event may answer it")
        default:
            return .handoffFailed("cannot \(verb) activity \(id): another app (another control connection) published it; only that app may \(verb) it")
        }
    }
}

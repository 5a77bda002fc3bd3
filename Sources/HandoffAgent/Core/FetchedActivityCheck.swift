import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whether a fetched activity may be delivered: what arrives must be what was advertised. A pure
/// rule, applied by the agent between the fetch and the delivery.
///
/// - Its type is the advertised one: `handoff list` showed this type, and its handler or app is
///   the one that runs.
/// - It has not expired (at the wall time `now`).
/// - The app the advertisement chose (if any) accepts it, type and team, as the activity itself says.
enum FetchedActivityCheck {
    /// Why `activity` (from the app of team `sourceTeam` on `peer`) is not delivered; nil when it may be.
    static func problem(_ activity: Activity, sourceTeam: String?, offered: ActivityAdvertisement.Current, from peer: String,
                        app: AppManifest?, now: Date) -> HandoffError? {
        guard activity.activityType == offered.activityType else {
            return .handoffFailed(
                "the activity from \(peer) is of type \(UntrustedText.escaped(activity.activityType.rawValue)), not the \(offered.activityType) it advertised; it was not delivered")
        }
        guard activity.isOffered(at: now) else {
            return .handoffFailed("activity \(activity.activityType) from \(peer) expired before it could be continued")
        }
        if let app, !app.accepts(activity.activityType, fromTeam: sourceTeam) {
            return .handoffFailed("the activity from \(peer) does not match what it advertised (type or team); it was not delivered")
        }
        return nil
    }
}

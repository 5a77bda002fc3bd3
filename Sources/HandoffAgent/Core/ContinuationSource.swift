import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which peer a continuation of an activity fetches from, or why there is none: a pure lookup
/// in the directory, with the error a person can act on.
///
/// - A reachable peer offering the activity now is the source.
/// - A paired peer that stopped answering (liveness) still offering it: 4609, with when it was last heard.
/// - A peer that left the network (its DNS-SD goodbye) that offered it: 4609, come back later.
/// - Otherwise no peer offers it: 4608, see `handoff list`.
enum ContinuationSource {
    /// The peer offering activity `id` and what it advertises of it, at the wall time `now`.
    static func find(_ id: UUID, in directory: PeerDirectory, now: Date) -> Result<(peer: PeerRecord, offered: ActivityAdvertisement.Current), HandoffError> {
        if let advertised = directory.peer(offering: id), let offered = advertised.advertisement.current {
            return .success((advertised, offered))
        }
        if let silent = directory.unreachablePeer(offering: id) {
            return .failure(.connectionUnavailable(stoppedAnswering(silent.peer.name, activity: id, lastHeard: silent.lastHeard, now: now)))
        }
        if let gone = directory.departedPeer(offering: id) {
            return .failure(.connectionUnavailable(
                "\(gone.name), which offered activity \(id), has left the network (its agent stopped or its host went away). Continue it once \(gone.name) is back."))
        }
        return .failure(.handoffFailed("no peer offers activity \(id) now; `handoff list` shows the activities on offer"))
    }

    /// The 4609 message for an activity of a peer that stopped answering.
    static func stoppedAnswering(_ name: String, activity id: UUID, lastHeard: Date?, now: Date) -> String {
        let when = lastHeard.map { "it was last heard from \(describe($0, now: now))" } ?? "it has not answered since this agent started"
        return "\(name), which offered activity \(id), stopped answering (its agent crashed or its host was cut off); \(when). "
            + "Continue it once `handoff peers` shows \(name) reachable again."
    }

    /// When something was last heard, for people: how long ago and the ISO 8601 time.
    static func describe(_ date: Date, now: Date) -> String {
        let ago = max(0, now.timeIntervalSince(date))
        let seconds = (ago * 10).rounded() / 10
        return "\(seconds) s ago, at \(date.ISO8601Format())"
    }
}

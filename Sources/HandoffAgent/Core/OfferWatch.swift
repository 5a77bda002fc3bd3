import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What changed in what the paired devices offer, as events (`handoff watch`, notifications),
/// and since when each activity has been on offer (`handoff list`). Pure: the agent shows it
/// the offers and the reachable peers after every change to its peer directory, with the time.
public struct OfferWatch: Sendable {
    /// The activities on offer, with when each was first seen (``OfferedActivity/offeredAt``).
    private var offers: [UUID: OfferedActivity] = [:]
    /// The peers found and answering, by name.
    private var reachable: Set<String> = []

    public init() {}

    /// The activities on offer now, newest first (``OfferSelection/newestFirst(_:)``).
    public var current: [OfferedActivity] { OfferSelection.newestFirst(Array(offers.values)) }

    /// Takes the offers and the reachable peers as they are at `now`; returns the events, in this
    /// order: peers that became reachable, activities withdrawn, activities offered, peers that
    /// became unreachable. So a watcher sees a peer arrive before its activity, and an activity go
    /// before its peer.
    public mutating func observe(offered: [OfferedActivity], reachablePeers: Set<String>, at now: Date) -> [AgentEvent] {
        var events: [AgentEvent] = []
        for peer in reachablePeers.subtracting(reachable).sorted() { events.append(AgentEvent(.peerReachable(peer: peer), at: now)) }
        let next = Dictionary(offered.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for gone in current.reversed() where next[gone.id] == nil {
            events.append(AgentEvent(.activityWithdrawn(id: gone.id, peer: gone.peer), at: now))
            offers.removeValue(forKey: gone.id)
        }
        for activity in offered {
            if var known = offers[activity.id] {
                // Still on offer: its title may change, its first sighting does not.
                known.title = activity.title
                known.peer = activity.peer
                offers[activity.id] = known
                continue
            }
            var fresh = activity
            fresh.offeredAt = now
            offers[activity.id] = fresh
            events.append(AgentEvent(.activityOffered(fresh), at: now))
        }
        for peer in reachable.subtracting(reachablePeers).sorted() { events.append(AgentEvent(.peerUnreachable(peer: peer), at: now)) }
        reachable = reachablePeers
        return events
    }
}

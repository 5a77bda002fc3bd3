#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The clipboard items the reachable paired devices advertise, with when this host first saw
/// each: `handoff paste` takes the newest. Pure: the agent shows it the advertised items after
/// every change to its peer directory.
///
/// "Newest" is by this host's clock (when the advertisement arrived), not the copier's: the
/// hosts' clocks need not agree, and a copy reaches the peers within a second.
public struct ClipboardSightings: Sendable {
    /// One device's clipboard item.
    public struct Sighting: Sendable, Hashable {
        /// The item's activity ID.
        public var itemID: UUID
        /// The device, by the name this host knows it by.
        public var peer: String
        /// When this host first saw the item.
        public var firstSeen: Date

        public init(itemID: UUID, peer: String, firstSeen: Date) {
            self.itemID = itemID
            self.peer = peer
            self.firstSeen = firstSeen
        }
    }

    private var sightings: [UUID: Sighting] = [:]

    public init() {}

    /// Takes the items advertised now (by item ID, with their peer's name); an item seen before
    /// keeps its first sighting, one no longer advertised is forgotten. Returns the items seen
    /// for the first time, oldest first.
    @discardableResult
    public mutating func observe(_ advertised: [(itemID: UUID, peer: String)], at now: Date) -> [Sighting] {
        var next: [UUID: Sighting] = [:]
        var fresh: [Sighting] = []
        for (itemID, peer) in advertised {
            if var known = sightings[itemID] {
                known.peer = peer
                next[itemID] = known
            } else {
                let sighting = Sighting(itemID: itemID, peer: peer, firstSeen: now)
                next[itemID] = sighting
                fresh.append(sighting)
            }
        }
        sightings = next
        return fresh
    }

    /// The newest item, from `peer` only when given; nil when there is none.
    public func newest(from peer: String? = nil) -> Sighting? {
        sightings.values.filter { peer == nil || $0.peer == peer }
            .max { ($0.firstSeen, $0.itemID.uuidString) < ($1.firstSeen, $1.itemID.uuidString) }
    }

    /// Every item seen, newest first.
    public var all: [Sighting] { sightings.values.sorted { ($0.firstSeen, $0.itemID.uuidString) > ($1.firstSeen, $1.itemID.uuidString) } }
}

import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A peer agent as discovery last saw it.
public struct PeerRecord: Sendable, Hashable {
    /// The DNS-SD instance name (the peer's agent name).
    public var name: String
    /// The host target, such as `h1.local.`.
    public var hostTarget: String
    /// IPv4 addresses of the host.
    public var addresses: [String]
    /// The peer listener's port.
    public var port: UInt16
    /// What its TXT record says.
    public var advertisement: ActivityAdvertisement

    public init(name: String, hostTarget: String, addresses: [String], port: UInt16, advertisement: ActivityAdvertisement) {
        self.name = name
        self.hostTarget = hostTarget
        self.addresses = addresses
        self.port = port
        self.advertisement = advertisement
    }

    /// Where to connect: the first address, else the host name.
    public var endpoint: PeerEndpoint {
        PeerEndpoint(host: addresses.first ?? hostTarget, port: Int(port))
    }
}

/// An activity a peer offers, as `handoff list` shows it.
public struct OfferedActivity: Sendable, Hashable {
    public var id: UUID
    public var peer: String
    public var activityType: ActivityType
    public var title: String?
}

/// The peers discovery has found. Pure state; the agent feeds it browse events.
public struct PeerDirectory: Sendable {
    /// What an update did.
    public enum Update: Sendable, Equatable {
        case added, changed, unchanged
        /// Not a usable handoff advertisement (foreign or malformed): ignored.
        case ignored(String)
        /// The local agent's own advertisement.
        case ownAdvertisement
    }

    private var peers: [String: PeerRecord] = [:]
    /// Peers that left (DNS-SD goodbye), kept so that continuing their last activity says the
    /// connection is gone (4609) rather than that the activity is unknown. Newest last.
    private var departed: [PeerRecord] = []
    /// How many departed peers are remembered.
    public static let departedCapacity = 64
    private let ownAgentID: String

    public init(ownAgentID: String) { self.ownAgentID = ownAgentID }

    /// Records a resolved service.
    public mutating func update(name: String, hostTarget: String, addresses: [String], port: UInt16, txtRecord: [UInt8]) -> Update {
        let advertisement: ActivityAdvertisement
        do { advertisement = try ActivityAdvertisement(txtRecord: txtRecord) } catch {
            peers.removeValue(forKey: name)
            return .ignored(error.description)
        }
        guard advertisement.agentID != ownAgentID else { return .ownAdvertisement }
        let record = PeerRecord(name: name, hostTarget: hostTarget, addresses: addresses, port: port, advertisement: advertisement)
        departed.removeAll { $0.name == name || $0.advertisement.agentID == advertisement.agentID }
        let previous = peers.updateValue(record, forKey: name)
        return previous == nil ? .added : (previous == record ? .unchanged : .changed)
    }

    /// Forgets a service that went away.
    @discardableResult
    public mutating func remove(name: String) -> PeerRecord? {
        guard let record = peers.removeValue(forKey: name) else { return nil }
        departed.append(record)
        if departed.count > Self.departedCapacity { departed.removeFirst(departed.count - Self.departedCapacity) }
        return record
    }

    /// Every known peer, by name.
    public var all: [PeerRecord] { peers.values.sorted { $0.name < $1.name } }

    /// The activities peers offer now.
    public var offered: [OfferedActivity] {
        all.compactMap { peer in
            peer.advertisement.current.map {
                OfferedActivity(id: $0.id, peer: peer.name, activityType: $0.activityType, title: $0.title)
            }
        }
    }

    /// The peer that offers an activity.
    public func peer(offering id: UUID) -> PeerRecord? {
        peers.values.first { $0.advertisement.current?.id == id }
    }

    /// A peer that left while it offered this activity.
    public func departedPeer(offering id: UUID) -> PeerRecord? {
        departed.last { $0.advertisement.current?.id == id }
    }

    /// A peer by name.
    public func peer(named name: String) -> PeerRecord? { peers[name] }
}

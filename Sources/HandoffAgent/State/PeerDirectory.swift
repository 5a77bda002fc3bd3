import HandoffCore
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How the agent knows of a peer (`handoff peers --json`'s `via`).
public enum PeerDiscovery: String, Sendable, Hashable {
    /// Its advertisement was browsed and resolved over DNS-SD (multicast, or a wide-area domain).
    case dnsSD = "dns-sd"
    /// Reached at an address stored for it (`trust add --address`, `pair HOST:PORT`), which sends
    /// its advertisement over the kept connection.
    case address
}

/// A peer agent as discovery last saw it.
public struct PeerRecord: Sendable, Hashable {
    /// This record under another name (the one stored for its device, when there is one).
    public func named(_ other: String?) -> PeerRecord {
        var renamed = self
        if let other { renamed.name = other }
        return renamed
    }

    /// The peer's agent name, from its advertisement (its instance name when it gave none).
    public var name: String
    /// The DNS-SD instance name (opaque when the advertisement is sealed).
    public var instanceName: String
    /// The peer's device ID, from its sealed advertisement; connections must present its
    /// certificate. Nil only for plain advertisements (tests of the plain protocol).
    public var deviceID: DeviceID?
    /// The host target, such as `h1.local.`.
    public var hostTarget: String
    /// The host's addresses, IPv6 and IPv4, in the order to try them.
    public var addresses: [String]
    /// The peer listener's port.
    public var port: UInt16
    /// What its TXT record says.
    public var advertisement: ActivityAdvertisement
    /// How its advertisement arrived.
    public var via: PeerDiscovery

    public init(name: String, hostTarget: String, addresses: [String], port: UInt16, advertisement: ActivityAdvertisement,
                deviceID: DeviceID? = nil, via: PeerDiscovery = .dnsSD) {
        self.name = advertisement.name ?? name
        self.instanceName = name
        self.deviceID = deviceID
        self.hostTarget = hostTarget
        self.addresses = addresses
        self.port = port
        self.advertisement = advertisement
        self.via = via
    }

    /// Where to connect: the addresses in the order discovery gives them
    /// (``IPAddressText/connectionOrder(_:)``), else the host name.
    public var endpoint: PeerEndpoint {
        PeerEndpoint(addresses: addresses, orHost: hostTarget, port: Int(port), expectedIdentity: deviceID?.bytes)
    }
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
    /// Paired devices that liveness found unreachable, with when each was last heard from (nil:
    /// never). Their activities are not offered until they answer again.
    private var unreachable: [DeviceID: Date?] = [:]
    /// Instances of paired peers a DNS-SD goodbye was heard for while liveness still found their
    /// device answering: kept until liveness finds it gone, or a record is heard again.
    private var saidGoodbye: Set<String> = []
    private let ownAgentID: String

    public init(ownAgentID: String) { self.ownAgentID = ownAgentID }

    /// Records a resolved service: `txtRecord` is the advertisement (opened, when sealed),
    /// `deviceID` who sealed it and `via` how it arrived. `unansweredAddresses`: where to reach
    /// it when DNS-SD resolved it before its address query answered and no address is known on
    /// that port (the hosts its device was last found at).
    public mutating func update(name: String, hostTarget: String, addresses: [String], port: UInt16, txtRecord: [UInt8],
                                deviceID: DeviceID? = nil, via: PeerDiscovery = .dnsSD, unansweredAddresses: [String] = []) -> Update {
        let advertisement: ActivityAdvertisement
        do { advertisement = try ActivityAdvertisement(txtRecord: txtRecord) } catch {
            peers.removeValue(forKey: name)
            return .ignored(error.description)
        }
        guard advertisement.agentID != ownAgentID else { return .ownAdvertisement }
        var (hostTarget, addresses, port, via) = (hostTarget, addresses, port, via)
        // A record pushed for an instance DNS-SD shows brings news of the peer, but a goodbye heard
        // for the instance stands until DNS-SD resolves it again or liveness finds the device gone.
        let shownByDNSSD = peers[name].flatMap { $0.via == .dnsSD ? $0 : nil }
            ?? (via == .address ? renamedByDNSSD(deviceID: deviceID, agentID: advertisement.agentID) : nil)
        let pushedOverDNSSD = via == .address && shownByDNSSD != nil
        if pushedOverDNSSD, let known = shownByDNSSD {
            // DNS-SD stays the way to the peer while it shows it: a record pushed over a
            // connection at the stored address (in flight as DNS-SD found it) only brings news.
            (hostTarget, addresses, port, via) = (known.hostTarget, known.addresses, known.port, known.via)
        } else if via == .dnsSD, addresses.isEmpty {
            // DNS-SD resolved the peer but its address query has not answered yet (Avahi under
            // load reports the record after a hold of a second without one): it keeps the
            // addresses it was reached at on that port, else its device's last known hosts,
            // rather than moving to its bare host name and back once the address arrives.
            let known = peers[name].flatMap { $0.port == port && $0.deviceID == deviceID && !$0.addresses.isEmpty ? $0.addresses : nil }
            addresses = known ?? unansweredAddresses
        }
        let record = PeerRecord(name: name, hostTarget: hostTarget, addresses: addresses, port: port, advertisement: advertisement,
                                deviceID: deviceID, via: via)
        departed.removeAll { $0.instanceName == name || $0.advertisement.agentID == advertisement.agentID }
        if let deviceID {
            // A device that restarted comes back under a new instance name: forget the old one.
            for (key, peer) in peers where key != name && peer.deviceID == deviceID { peers.removeValue(forKey: key) }
        }
        for key in saidGoodbye where peers[key] == nil { saidGoodbye.remove(key) }
        if !pushedOverDNSSD { saidGoodbye.remove(name) }
        let previous = peers.updateValue(record, forKey: name)
        return previous == nil ? .added : (previous == record ? .unchanged : .changed)
    }

    /// The peer DNS-SD shows for the same run of a device's agent (`agentID`) under another
    /// instance name, no goodbye heard for it: the instance Avahi renamed on a name conflict, whose
    /// record, sealed again for the new name, the device pushed before DNS-SD brought it. The
    /// device is still where DNS-SD found it; only the name changed.
    private func renamedByDNSSD(deviceID: DeviceID?, agentID: String) -> PeerRecord? {
        guard let deviceID else { return nil }
        return peers.first { key, peer in
            peer.via == .dnsSD && peer.deviceID == deviceID && peer.advertisement.agentID == agentID && !saidGoodbye.contains(key)
        }?.value
    }

    /// Forgets a service that went away.
    @discardableResult
    public mutating func remove(name: String) -> PeerRecord? {
        saidGoodbye.remove(name)
        guard let record = peers.removeValue(forKey: name) else { return nil }
        departed.append(record)
        if departed.count > Self.departedCapacity { departed.removeFirst(departed.count - Self.departedCapacity) }
        return record
    }

    /// A goodbye was heard for a paired peer's instance while its device still answers: keeps
    /// the peer, marked, until ``removeAfterGoodbye(deviceID:)``. False (nothing kept) when the
    /// instance holds no peer of a known device.
    public mutating func keepAfterGoodbye(name: String) -> Bool {
        guard let peer = peers[name], peer.deviceID != nil else { return false }
        saidGoodbye.insert(name)
        return true
    }

    /// Liveness found a device gone: forgets its instances a goodbye was heard for, and returns them.
    public mutating func removeAfterGoodbye(deviceID: DeviceID) -> [PeerRecord] {
        let names = peers.filter { saidGoodbye.contains($0.key) && $0.value.deviceID == deviceID }.map(\.key)
        return names.compactMap { remove(name: $0) }
    }

    /// The peer on a DNS-SD instance.
    public func peer(instance name: String) -> PeerRecord? { peers[name] }

    /// Every known peer, by name.
    public var all: [PeerRecord] { peers.values.sorted { ($0.name, $0.instanceName) < ($1.name, $1.instanceName) } }

    /// The activities reachable peers offer now.
    public var offered: [OfferedActivity] {
        all.filter(isReachable).compactMap { peer in
            peer.advertisement.current.map {
                OfferedActivity(id: $0.id, peer: peer.name, activityType: $0.activityType.rawValue, title: $0.title)
            }
        }
    }

    /// The names of the peers found and not found unreachable by liveness.
    public var reachablePeerNames: Set<String> {
        Set(peers.values.filter(isReachable).map(\.name))
    }

    /// The reachable peer that offers an activity.
    public func peer(offering id: UUID) -> PeerRecord? {
        peers.values.first { $0.advertisement.current?.id == id && isReachable($0) }
    }

    /// An unreachable peer whose advertisement (still listed by DNS-SD) offers this activity, and
    /// when it was last heard from.
    public func unreachablePeer(offering id: UUID) -> (peer: PeerRecord, lastHeard: Date?)? {
        for peer in peers.values where peer.advertisement.current?.id == id {
            if let deviceID = peer.deviceID, let lastHeard = unreachable[deviceID] { return (peer, lastHeard) }
        }
        return nil
    }

    /// Whether liveness has not found the peer unreachable.
    public func isReachable(_ peer: PeerRecord) -> Bool {
        guard let deviceID = peer.deviceID else { return true }
        return unreachable[deviceID] == nil
    }

    /// Records what liveness found: a device stopped answering (last heard at `lastHeard`), or
    /// answers again. Returns whether this changed anything.
    @discardableResult
    public mutating func setReachable(_ deviceID: DeviceID, _ reachable: Bool, lastHeard: Date? = nil) -> Bool {
        if reachable { return unreachable.removeValue(forKey: deviceID) != nil }
        let changed = unreachable[deviceID] == nil
        unreachable[deviceID] = .some(lastHeard)
        return changed
    }

    /// A peer that left while it offered this activity.
    public func departedPeer(offering id: UUID) -> PeerRecord? {
        departed.last { $0.advertisement.current?.id == id }
    }

    /// A peer by agent name (or instance name).
    public func peer(named name: String) -> PeerRecord? {
        peers[name] ?? all.first { $0.name == name }
    }

    /// Forgets every record of a device (it was unpaired). Returns their instance names.
    @discardableResult
    public mutating func removeAll(deviceID: DeviceID) -> [String] {
        let names = peers.filter { $0.value.deviceID == deviceID }.map(\.key)
        for name in names {
            peers.removeValue(forKey: name)
            saidGoodbye.remove(name)
        }
        departed.removeAll { $0.deviceID == deviceID }
        unreachable.removeValue(forKey: deviceID)
        return names
    }
}

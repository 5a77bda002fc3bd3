import HandoffConfiguration
import HandoffCore
import HandoffDiscovery
import HandoffTrust

/// Advertisements pushed over the kept liveness connection. Where DNS-SD shows nothing of a
/// device (no multicast between the two, a router, a VPN), liveness reaches it at its stored
/// addresses and subscribes to its advertisement (``LivenessTarget/subscribes``); it subscribes
/// as well to every peer DNS-SD shows whose hello says it pushes
/// (``PeerHello/pushesAdvertisements``), so that a change there arrives in one frame rather than
/// at DNS-SD's next announcement. Each record pushed takes the same path as one DNS-SD resolved:
/// opened, checked for its signature and freshness by ``AdvertisementIntake`` (the newest record
/// wins by either path, the same one by both is taken once), then offered, watched and notified
/// like any other.
extension Agent {
    /// A record `deviceID` pushed over the liveness connection to `endpoint` (`announced`: with
    /// its word that it started, ``receivedAnnouncement(port:instanceName:txtRecord:from:host:)``).
    public func receivedPushedAdvertisement(instanceName: String, txtRecord: [UInt8], from deviceID: DeviceID, at endpoint: PeerEndpoint,
                                            announced: Bool = false) {
        let service = DiscoveredService(
            instanceName: instanceName, serviceType: configuration.serviceType, domain: "", hostTarget: endpoint.host,
            port: UInt16(clamping: endpoint.port), txtRecord: txtRecord,
            addresses: PeerAddress(host: endpoint.host).isNumeric ? [endpoint.host] : [], interfaceIndex: 0)
        handleResolved(service, pushedBy: deviceID, announced: announced)
    }

    /// Liveness stopped watching a device (unpaired, or neither DNS-SD nor an address shows it
    /// any more): what it pushed for a peer DNS-SD does not show is forgotten, as a DNS-SD
    /// goodbye would forget it.
    public func forgetPushedAdvertisements(of deviceID: DeviceID) {
        for peer in directory.all where peer.deviceID == deviceID && peer.via == .address {
            if directory.remove(name: peer.instanceName) != nil {
                logger.info("peer gone: no longer reached at its address", metadata: ["handoff.peer": "\(peer.name)"])
            }
        }
    }
}

extension PairedDevice {
    /// Where the device may be reached without DNS-SD: its stored addresses, at port 52123
    /// (``AgentConfiguration/defaultPort``) when one names none, pinned to its device ID.
    var storedEndpoints: [PeerEndpoint] { endpoints(addresses) }

    /// Where it was last found (``lastKnownAddresses``), pinned to its device ID.
    var lastKnownEndpoints: [PeerEndpoint] { endpoints(lastKnownAddresses) }

    private func endpoints(_ addresses: [PeerAddress]) -> [PeerEndpoint] {
        addresses.map { PeerEndpoint(host: $0.host, port: $0.port ?? AgentConfiguration.defaultPort, expectedIdentity: deviceID.bytes) }
    }
}

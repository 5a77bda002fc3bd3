import HandoffConfiguration
import HandoffCore
import HandoffDiscovery
import HandoffTrust

/// Paired devices known by address: where DNS-SD shows nothing of a device (no multicast between
/// the two, a router, a VPN), liveness reaches it at its stored addresses and subscribes to its
/// advertisement on the kept connection (``LivenessTarget/subscribes``). Each record it pushes
/// takes the same path as one DNS-SD resolved: opened, checked for its signature and freshness by
/// ``AdvertisementIntake``, then offered, watched and notified like any other.
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

    /// Liveness stopped watching a device (unpaired, its addresses removed, or now shown by
    /// DNS-SD): what it pushed is forgotten, as a DNS-SD goodbye would forget it.
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

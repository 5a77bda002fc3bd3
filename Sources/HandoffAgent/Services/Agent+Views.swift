import HandoffCore
import HandoffTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Views for the control socket (typed; their JSON forms are HandoffCore's)

    /// `handoff status`.
    public func status() -> AgentStatus {
        let now = wallClock()
        return AgentStatus(
            name: configuration.name, deviceID: deviceID.description, registeredName: advertiser.registeredName,
            pairedDevices: trust.devices.count, pairing: pairingWindow != nil, agentID: agentID, port: port,
            serviceType: configuration.serviceType, socketPath: configuration.socketPath,
            protocolVersion: PeerHello.supportedVersions.max()!, sequence: store.sequence, current: store.current(at: now)?.id,
            activities: store.all.map {
                AgentStatus.Held(id: $0.id, activityType: $0.activityType.rawValue, title: $0.title, expired: $0.isExpired(at: now))
            },
            peers: directory.all.count, apps: Array(registry.registered.values), streamPairs: openStreamPairs, paused: settings.paused)
    }

    /// `handoff peers`.
    public func peers() -> [PeerSummary] {
        directory.all.map { peer in
            PeerSummary(name: peer.name, deviceID: peer.deviceID?.description, instanceName: peer.instanceName,
                        agentID: peer.advertisement.agentID, host: peer.hostTarget, addresses: peer.addresses, port: Int(peer.port),
                        sequence: peer.advertisement.sequence, current: peer.advertisement.current?.id,
                        reachable: directory.isReachable(peer), via: peer.via.rawValue)
        }
    }

    /// `handoff list`: newest first, with when each was first seen.
    public func offered() -> [OfferedActivity] {
        offerWatch.current
    }
}

import HandoffCore
import HandoffTrust
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A paired peer that liveness watches: where to reach it, and how often DNS-SD resolved it.
public struct LivenessTarget: Sendable, Hashable {
    /// The peer's device ID; connections are pinned to it.
    public var deviceID: DeviceID
    /// The peer's agent name, for logs.
    public var name: String
    /// Where its agent listens: the one DNS-SD resolved, or the addresses stored for the device,
    /// tried in turn.
    public var endpoints: [PeerEndpoint]
    /// Grows on every fresh DNS-SD resolve of the peer.
    public var generation: Int
    /// Whether the connection must subscribe to the peer's advertisement: DNS-SD shows nothing of
    /// it, so what it offers comes over this connection (``PeerDiscovery/address``), and it is
    /// told this agent's own at every connection (`announce`). A connection to a peer DNS-SD shows
    /// subscribes too when the peer's hello says it pushes (``PeerHello/pushesAdvertisements``),
    /// so that its changes arrive at once; DNS-SD stays the way to it.
    public var subscribes: Bool
}

extension Agent {
    /// The paired peers to watch, by device ID, for ``LivenessService``: those DNS-SD shows, at
    /// the endpoint it resolved; the others with stored addresses, at those addresses
    /// (``PairedDevice/addresses``; no port: ``AgentConfiguration/defaultPort``); the others being
    /// rejoined (``Rejoining``), at the addresses they were last found at.
    public func livenessTargets() -> [DeviceID: LivenessTarget] {
        rejoining.windowPassed(now: timeline.now) { device in directory.all.contains { $0.deviceID == device } }
        var targets: [DeviceID: LivenessTarget] = [:]
        for peer in directory.all where peer.via == .dnsSD {
            guard let deviceID = peer.deviceID, trust.device(deviceID) != nil else { continue }
            rejoining.shownByDNSSD(deviceID)
            targets[deviceID] = LivenessTarget(deviceID: deviceID, name: peer.name, endpoints: [peer.endpoint],
                                               generation: resolveGenerations[deviceID] ?? 0, subscribes: false)
        }
        for device in trust.devices where targets[device.deviceID] == nil {
            let endpoints = !device.addresses.isEmpty ? device.storedEndpoints
                : rejoining.reachesAtLastKnownAddresses(device.deviceID) ? device.lastKnownEndpoints : []
            guard !endpoints.isEmpty else { continue }
            targets[device.deviceID] = LivenessTarget(deviceID: device.deviceID, name: device.name, endpoints: endpoints,
                                                      generation: resolveGenerations[device.deviceID] ?? 0, subscribes: true)
        }
        return targets
    }

    /// ``livenessTargets()`` with this device's advertising key, read together: a key rotated
    /// for an unpairing is told only to devices still paired (``LivenessService``).
    public func livenessSnapshot() -> (targets: [DeviceID: LivenessTarget], advertisingKey: AdvertisingKey) {
        (livenessTargets(), trust.ownAdvertisingKey)
    }

    /// Liveness found a paired device unreachable (its activities are no longer offered) or
    /// reachable again.
    public func setReachability(_ deviceID: DeviceID, reachable: Bool, lastHeard: Date?) {
        if !reachable, !rejoining.foundUnreachable(deviceID, listed: directory.all.contains { $0.deviceID == deviceID }, now: timeline.now) {
            // Never heard from since start: not marked unreachable, and once the rejoin window
            // has passed not tried at its last known addresses again (``Rejoining/foundUnreachable(_:listed:now:)``).
            cutOff(deviceID, name: deviceID.shortID, lastHeard: lastHeard)
            logger.debug("not reached at its last known addresses", metadata: ["handoff.device": "\(deviceID.shortID)"])
            return
        }
        if !reachable {
            // A goodbye heard for it is now confirmed.
            for peer in directory.removeAfterGoodbye(deviceID: deviceID) { logger.info("peer gone", metadata: ["handoff.peer": "\(peer.name)"]) }
        }
        guard directory.setReachable(deviceID, reachable, lastHeard: lastHeard) else { return }
        let name = directory.all.first { $0.deviceID == deviceID }?.name ?? deviceID.shortID
        if reachable {
            logger.info("peer reachable again", metadata: ["handoff.peer": "\(name)", "handoff.device": "\(deviceID.shortID)"])
        } else {
            cutOff(deviceID, name: name, lastHeard: lastHeard)
            logger.info("peer unreachable", metadata: [
                "handoff.peer": "\(name)", "handoff.device": "\(deviceID.shortID)",
                "handoff.lastHeard": "\(lastHeard.map { ContinuationSource.describe($0, now: wallClock()) } ?? "never")",
            ])
        }
    }

    /// Idle connections to an unreachable device would only hold a continuation until its fetch
    /// deadline, and the continuations fetching from it now would wait for it: both end now.
    private func cutOff(_ deviceID: DeviceID, name: String, lastHeard: Date?) {
        fetchPool.discard { $0.expectedIdentity == deviceID.bytes }
        abandonFetches(from: deviceID, name: name, lastHeard: lastHeard)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

import HandoffCore
import HandoffTrust

extension Agent {
    /// `diagnose` (`handoff doctor`): avahi-daemon's state on the system bus, whether this agent's
    /// own record shows up in its browse, and for each paired device what DNS-SD and liveness know
    /// and how a pinned connection to it goes now (the devices are probed at once).
    public func diagnose() async -> AgentDiagnosis {
        let avahi = await AvahiServerProbe.state()
        let registeredName = advertiser.registeredName
        let ownVisible = registeredName.map { intake.ownInstancesVisible.contains($0) } ?? false
        let now = Int64(max(0, wallClock().timeIntervalSince1970 * 1000))
        let connector = transport
        let (hello, clock) = (self.hello, self.clock)
        var pending: [(device: AgentDiagnosis.Device, endpoint: PeerEndpoint?)] = []
        for paired in trust.devices {
            let peer = directory.all.first { $0.deviceID == paired.deviceID }
            let ahead = intake.seen.last[paired.deviceID].map { Int64(clamping: $0.timestamp) - now }
            // Reached by address: at one it was given, or where it connected from (its announce).
            let stored = peer.map { peer in paired.storedEndpoints.contains { $0.host == peer.endpoint.host && $0.port == peer.endpoint.port } } ?? false
            let device = AgentDiagnosis.Device(
                name: peer?.name ?? paired.name, deviceID: paired.deviceID.description, seenOverDNSSD: peer?.via == .dnsSD,
                reachedByAddress: peer?.via == .address, atStoredAddress: stored, addresses: peer?.addresses ?? [], port: peer.map { Int($0.port) },
                reachable: peer.map { directory.isReachable($0) } ?? false, probe: .notTried, clockAheadMilliseconds: peer == nil ? nil : ahead)
            // Probed where DNS-SD or the subscription put it, else at its first stored address.
            pending.append((device, peer?.endpoint ?? paired.storedEndpoints.first))
        }
        let devices = await withTaskGroup(of: (Int, AgentDiagnosis.ProbeOutcome).self) { group in
            for (index, entry) in pending.enumerated() {
                guard let endpoint = entry.endpoint else { continue }
                group.addTask { (index, await PeerProbe.run(endpoint, connector: connector, hello: hello, clock: clock)) }
            }
            var devices = pending.map(\.device)
            for await (index, outcome) in group { devices[index].probe = outcome }
            return devices
        }
        return AgentDiagnosis(avahi: avahi, registeredName: registeredName, ownServiceVisible: ownVisible, port: port, devices: devices)
    }
}

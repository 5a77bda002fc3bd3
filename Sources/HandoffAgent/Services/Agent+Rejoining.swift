import HandoffCore
import HandoffTransport
import HandoffTrust

/// The shell of ``Rejoining``: a restarting agent tells its paired devices at once that it is
/// back, on its first liveness connection to each (`announce`), and a device that announces
/// itself is listed at once, reached at the address it announced from.
extension Agent {
    /// The `announce` frame to send on a liveness connection just opened to `device`, if it
    /// should carry one (``Rejoining/shouldAnnounce(to:subscribing:)``): this agent's port and the
    /// advertisement now.
    public func announcement(to device: DeviceID, subscribing: Bool) -> Frame? {
        guard rejoining.shouldAnnounce(to: device, subscribing: subscribing) else { return nil }
        let record = advertisementFeed.current
        return PeerMessage.announce(port: port, instanceName: record.instanceName, txtRecord: record.txtRecord).frame
    }

    /// A paired device said on a connection pinned to it, from `host`, that it is back: its
    /// record is taken as if resolved at `host` and `port` (and that address remembered; for a
    /// device with stored addresses, at the first of those), the device is reachable (it just
    /// spoke), and liveness reaches it there until DNS-SD shows it. Returns where it is reached
    /// now (nil: the device is not paired).
    @discardableResult
    public func receivedAnnouncement(port: Int, instanceName: String, txtRecord: [UInt8], from deviceID: DeviceID, host: String) -> PeerEndpoint? {
        guard trust.isPaired(deviceID) else { return nil }
        rejoining.announced(by: deviceID)
        // A device known by stored addresses is reached at those (liveness tries them in turn):
        // its announce brings its record, not a new way to it.
        let stored = trust.device(deviceID)?.storedEndpoints.first
        let endpoint = stored ?? PeerEndpoint(host: host, port: port, expectedIdentity: deviceID.bytes)
        receivedPushedAdvertisement(instanceName: instanceName, txtRecord: txtRecord, from: deviceID, at: endpoint, announced: true)
        setReachability(deviceID, reachable: true, lastHeard: nil)
        logger.info("a paired device announced it is back", metadata: ["handoff.device": "\(deviceID.shortID)", "handoff.address": "\(host):\(port)"])
        return endpoint
    }

    /// A paired device said on its liveness connection that it stops, as a DNS-SD goodbye says
    /// it: what it announced is forgotten, and it is not reached at that address any more. (A
    /// device known by a stored address is still watched there; one DNS-SD shows leaves by
    /// DNS-SD's own goodbye.)
    public func receivedGoodbye(from deviceID: DeviceID) {
        guard trust.isPaired(deviceID) else { return }
        rejoining.unreachable(deviceID)
        guard trust.device(deviceID)?.addresses.isEmpty == true else { return }
        forgetPushedAdvertisements(of: deviceID)
    }
}

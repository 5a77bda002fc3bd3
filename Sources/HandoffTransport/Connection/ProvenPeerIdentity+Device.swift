import HandoffCore
import HandoffTrust

extension ProvenPeerIdentity {
    /// The proven device ID as a ``DeviceID``; nil if the transport reported one that is not
    /// 32 bytes long.
    public var device: DeviceID? { try? DeviceID(bytes: deviceID) }
}

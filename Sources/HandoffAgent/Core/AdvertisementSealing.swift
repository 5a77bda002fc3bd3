import HandoffCore
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What this agent advertises, as a pure value: the sealing policy. An advertisement is sealed
/// again only when what it is sealed from changed (the current activity, the pairing window, the
/// advertising key or the registered instance name), and each seal carries a timestamp that is
/// strictly greater than every earlier one of this device's, so peers take it as fresh
/// (``SeenAdvertisements``) even if the wall clock went back.
struct AdvertisementSealing: Sendable {
    /// The device that signs the records.
    let identity: DeviceIdentity
    /// What the advertisement was last sealed from.
    private(set) var sealedFrom: SealInput
    /// The timestamp of the last seal (ms since 1970, strictly increasing).
    private(set) var timestamp: UInt64
    /// The TXT record advertised now.
    private(set) var txtRecord: [UInt8]

    /// Seals `input` for the first time, at the wall time `now` or just past `ownLast` (the
    /// newest record of this device's that peers may have taken before a restart), whichever is later.
    init(_ input: SealInput, identity: DeviceIdentity, now: Date, ownLast: UInt64) {
        self.identity = identity
        self.sealedFrom = input
        self.timestamp = max(Self.milliseconds(now), ownLast &+ 1)
        self.txtRecord = input.seal(timestamp: timestamp, identity: identity)
    }

    /// What to advertise at the wall time `now`: the current activity of `store` with its app's
    /// team, the store's sequence and this agent's name, sealed under `key` for `instanceName`;
    /// the agent's name is also offered for pairing while a pairing window is open.
    static func input(_ store: ActivityStore, agentID: String, name: String, pairingOpen: Bool, key: AdvertisingKey,
                      instanceName: String, paused: Bool = false, now: Date) -> SealInput {
        // Paused (`handoff pause`): the device is still there for its paired devices, offering nothing.
        let current = paused ? nil : store.current(at: now).map {
            ActivityAdvertisement.Current(id: $0.id, activityType: $0.activityType, title: $0.title, teamID: store.owner(of: $0.id)?.identity.teamID)
        }
        let clipboard = paused ? nil : store.clipboardItem(at: now)?.id
        let plaintext = ActivityAdvertisement(agentID: agentID, sequence: store.sequence, current: current, name: name, clipboard: clipboard)
            .txtRecord(maximumSize: SealedAdvertisement.maximumPlaintextBytes)
        return SealInput(plaintext: plaintext, pairingName: pairingOpen ? name : nil, key: key, instanceName: instanceName)
    }

    /// The record to advertise for `input` at the wall time `now`; nil when nothing changed.
    mutating func reseal(_ input: SealInput, now: Date) -> [UInt8]? {
        guard input != sealedFrom else { return nil }
        sealedFrom = input
        timestamp = max(Self.milliseconds(now), timestamp + 1)
        txtRecord = input.seal(timestamp: timestamp, identity: identity)
        return txtRecord
    }

    private static func milliseconds(_ date: Date) -> UInt64 {
        UInt64(max(0, date.timeIntervalSince1970 * 1000))
    }
}

import HandoffCore
import HandoffDiscovery
import HandoffTransport
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an advertisement is sealed from; an unchanged input is not sealed again.
struct SealInput: Sendable, Equatable {
    var plaintext: [UInt8]
    var pairingName: String?
    var key: AdvertisingKey
    /// The instance name the record is published under (signed into it).
    var instanceName: String

    func seal(timestamp: UInt64, identity: DeviceIdentity) -> [UInt8] {
        SealedAdvertisement.txtRecord(sealing: plaintext, timestamp: timestamp, instanceName: instanceName, key: key,
                                      identity: identity, pairingName: pairingName)
    }
}

extension Agent {
    /// Frame limits on pairing and key-exchange connections.
    static let pairingLimits = FrameLimits(maxFrameBytes: 4096, maxUserInfoBytes: 0)

    // MARK: Paired devices

    /// Whether a device is paired with this one.
    public func isPaired(_ id: DeviceID) -> Bool { trust.isPaired(id) }

    /// The name this host stored for a paired device (given at pairing or with `trust add`), or
    /// nil for an unknown or unpaired device.
    public func trustedName(of id: DeviceID?) -> String? { id.flatMap { trust.device($0)?.name } }

    /// Saves a changed trust store, then makes it current; on failure nothing changes.
    func commit(_ next: TrustStore) throws(HandoffError) {
        if let directory = security.stateDirectory {
            do { try next.save(directory: directory) } catch {
                throw .handoffFailed("cannot save the paired devices in \(directory): \(error). Nothing was changed.")
            }
        }
        trust = next
        security.paired.replace(with: next.devices.map(\.deviceID))
    }

    /// This device's current advertising key (for provisioning a peer with ``trustAdd(_:name:advertisingKey:)``).
    public var advertisingKey: AdvertisingKey { trust.ownAdvertisingKey }

    /// `handoff trust list`.
    public func trustedDevices() -> [TrustedDevice] {
        trust.devices.map { device in
            TrustedDevice(deviceID: device.deviceID.description, name: device.name, pairedAt: device.pairedAt.formatted(.iso8601),
                          advertisingKeyKnown: device.advertisingKey != nil, online: directory.all.contains { $0.deviceID == device.deviceID },
                          addresses: device.addresses.map(\.description))
        }
    }

    /// `handoff trust add`: pairs with a device by its ID, without a person confirming on both
    /// sides (provisioning). The device must add this one too.
    /// With `advertisingKey` and `certificateDER` (the device's certificate, whose public key
    /// checks its signatures), the device's advertisements can be read at once; without, the
    /// agent learns them by connecting to the device when it sees its advertisement.
    public func trustAdd(_ id: DeviceID, name: String?, advertisingKey: AdvertisingKey? = nil,
                         certificateDER: [UInt8]? = nil, addresses: [PeerAddress] = []) throws(HandoffError) -> TrustChange {
        guard id != deviceID else { throw .handoffFailed("\(id) is this device's own ID; add the ID that the other device's `handoff status` prints") }
        var publicKey: DevicePublicKey?
        do {
            if let advertisingKey { try trust.checkAdvertisingKey(advertisingKey, for: id) }
            if let certificateDER { publicKey = try DevicePublicKey(certificateDER: certificateDER, of: id) }
        } catch {
            throw .handoffFailed("\(error.message). Nothing was changed.")
        }
        var next = trust
        next.add(PairedDevice(deviceID: id, name: name ?? trust.device(id)?.name ?? id.shortID, advertisingKey: advertisingKey, publicKey: publicKey,
                              addresses: addresses))
        try commit(next)
        logger.info("device trusted", metadata: ["handoff.device": "\(id.shortID)"])
        reopenUnreadable()
        askEveryUnreadable()
        return TrustChange(deviceID: id.description, name: trust.device(id)?.name ?? id.shortID)
    }

    /// `handoff trust remove`: unpairs a device. Its open connections are closed at once, and
    /// this device's advertising key rotates so the removed device can no longer read its
    /// advertisements.
    public func trustRemove(_ id: DeviceID) throws(HandoffError) -> TrustChange {
        guard trust.isPaired(id) else { throw .handoffFailed("device \(id) is not paired with \(configuration.name); `handoff trust list` lists the paired devices") }
        var next = trust
        let removed = next.remove(id)
        try commit(next)
        let closed = security.registry.closeAll(for: id)
        for name in directory.removeAll(deviceID: id) { unreadable.removeValue(forKey: name) }
        perform(intake.forget(id, now: timeline.now))
        refreshAdvertisement()
        logger.info("device unpaired", metadata: ["handoff.device": "\(id.shortID)", "handoff.closed": "\(closed)"])
        return TrustChange(deviceID: id.description, name: removed?.name ?? id.shortID, closedConnections: closed)
    }

    /// A paired device sent its advertising key (key exchange) over a TLS connection on which it
    /// presented `certificateDER`; returns this device's key.
    ///
    /// The certificate's public key is recorded as the device's (its SHA-256 is the device ID, so
    /// it is the device's own): its advertisements are verified with it. A key that is this
    /// device's own or another paired device's is refused, and nil returned: the device gets
    /// nothing back.
    func receivedAdvertisingKey(_ bytes: [UInt8], from id: DeviceID, certificateDER: [UInt8]?) -> AdvertisingKey? {
        guard trust.isPaired(id), let key = try? AdvertisingKey(bytes: bytes) else { return nil }
        var next = trust
        var changed = false
        if let certificateDER, let publicKey = try? DevicePublicKey(certificateDER: certificateDER, of: id) {
            changed = next.updatePublicKey(publicKey, for: id)
        }
        var refused = false
        do { changed = try next.updateAdvertisingKey(key, for: id) || changed } catch {
            logger.warning("refused the advertising key a paired device sent", metadata: ["handoff.device": "\(id.shortID)", "handoff.reason": "\(error.message)"])
            refused = true
        }
        if changed {
            do { try commit(next) } catch { logger.warning("\(error.message)") }
            reopenUnreadable()
        }
        return refused ? nil : trust.ownAdvertisingKey
    }

    /// Drops a device's instances from the directory (as departed): it unpaired this device.
    func forgetAdvertisements(of id: DeviceID) {
        for peer in directory.all where peer.deviceID == id {
            if directory.remove(name: peer.instanceName) != nil { logger.info("peer gone: it unpaired this device", metadata: ["handoff.peer": "\(peer.name)"]) }
        }
    }

    /// Tries the unreadable advertisements again (a key was learnt). The senders of those that
    /// stay unreadable are asked for their keys once, after all are tried: with 23 peers
    /// restarting, asking after each record made every learnt key cost a schedule pass per record.
    func reopenUnreadable() {
        var learnKeys = false
        for entry in unreadable.values {
            learnKeys = handleResolved(entry.service, pushedBy: entry.pushedBy, probingKeys: false) || learnKeys
        }
        if learnKeys { askUnreadable() }
    }

    /// The paired devices changed: senders that answered as a device now paired are asked first.
    func askEveryUnreadable() {
        keyLearning.schedule.trustChanged { trust.isPaired($0) }
        askUnreadable()
    }
}

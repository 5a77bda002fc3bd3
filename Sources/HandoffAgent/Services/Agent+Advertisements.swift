import HandoffCore
import HandoffDiscovery
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The newest advertisement taken from each device (``SeenAdvertisements``), and when it was
/// last written to the state directory.
struct SeenAdvertisementsFile: Sendable {
    /// How often, at most, the state is written: a change within this time of the last write is
    /// written when the time is up. A crash loses at most this much (a record taken in the last
    /// two seconds could be taken again after a restart, but no older one).
    static let saveInterval: Duration = .seconds(2)

    var seen: SeenAdvertisements
    var savedAt: ContinuousClock.Instant?
    var saveScheduled = false
}

extension Agent {
    /// What the agent believes about a DNS-SD instance: sealed records are opened with the paired
    /// devices' advertising keys and taken only when signed by the device whose key opened them
    /// (``SealedAdvertisement/open(_:instanceName:senders:)``), fresh (``SeenAdvertisements``),
    /// and never at the cost of a peer already verified on that instance.
    func handleResolved(_ service: DiscoveredService) {
        let name = service.instanceName
        let sealed: SealedAdvertisement.Public
        do { sealed = try SealedAdvertisement.parse(txtRecord: service.txtRecord) } catch {
            unreadable.removeValue(forKey: name)
            if let kept = verifiedPeer(instance: name) {
                logger.warning("ignoring a record that is not a readable handoff advertisement on a paired peer's instance; keeping the peer", metadata: [
                    "handoff.peer": "\(kept.name)", "handoff.reason": "\(error)",
                ])
                return
            }
            if directory.remove(name: name) != nil { logger.info("peer gone", metadata: ["handoff.peer": "\(name)"]) }
            logger.debug("ignoring service", metadata: ["handoff.peer": "\(name)", "handoff.reason": "\(error)"])
            return
        }
        var senders = trust.devices.compactMap { device in
            device.advertisingKey.map { SealedAdvertisement.Sender(deviceID: device.deviceID, advertisingKey: $0, publicKey: device.publicKey) }
        }
        senders.append(.init(deviceID: deviceID, advertisingKey: trust.ownAdvertisingKey, publicKey: security.identity.publicKey))
        switch SealedAdvertisement.open(sealed, instanceName: name, senders: senders) {
        case .opened(let opened):
            unreadable.removeValue(forKey: name)
            take(opened, from: service)
        case .forged(let claimed):
            // Sealed with a paired device's key but not signed by it: another holder of the key
            // (a paired device gone bad), or a genuine record moved to another instance name.
            logger.warning("ignoring a forged advertisement: it is sealed with a paired device's key but not signed by that device for this instance", metadata: [
                "handoff.peer": "\(name)", "handoff.device": "\(claimed.shortID)", "handoff.address": "\(service.addresses)",
            ])
        case .unverified, .unreadable:
            // A key not learnt yet (or rotated), or an unpaired device. A peer verified on this
            // instance keeps what it said until its device is heard from again: a stranger's record
            // for the same name must not remove it. The key is asked for, as it may have rotated.
            let isNew = unreadable[name] == nil
            unreadable[name, default: UnreadableService(service: service)].service = service
            if let kept = verifiedPeer(instance: name) {
                logger.info("kept a paired peer whose instance now carries a record this agent cannot verify; asking for its key", metadata: [
                    "handoff.peer": "\(kept.name)",
                ])
            } else if isNew {
                logger.debug("sealed advertisement from an unknown device", metadata: ["handoff.peer": "\(name)"])
            }
            learnKey(ofInstance: name)
        }
    }

    /// A DNS-SD goodbye (or expiry) for an instance. A paired peer that liveness still finds
    /// answering is kept until liveness finds it gone (``setReachability(_:reachable:lastHeard:)``):
    /// anyone on the LAN can send a goodbye for any instance name; only the device can answer a
    /// ping pinned to its certificate.
    func handleRemoved(_ name: String) {
        unreadable.removeValue(forKey: name)
        if let peer = verifiedPeer(instance: name), directory.isReachable(peer), directory.keepAfterGoodbye(name: name) {
            logger.info("goodbye for a paired peer that still answers: kept until liveness finds it gone", metadata: ["handoff.peer": "\(peer.name)"])
            return
        }
        if let peer = directory.remove(name: name) { logger.info("peer gone", metadata: ["handoff.peer": "\(peer.name)"]) }
    }

    /// Takes a verified record, unless it is a replay.
    private func take(_ opened: SealedAdvertisement.Opened, from service: DiscoveredService) {
        let name = service.instanceName
        switch seenAdvertisements.seen.admit(opened.deviceID, timestamp: opened.timestamp, instanceName: name) {
        case .replay(let last):
            logger.info("ignoring a replayed advertisement", metadata: [
                "handoff.peer": "\(name)", "handoff.device": "\(opened.deviceID.shortID)",
                "handoff.timestamp": "\(opened.timestamp)", "handoff.last": "\(last.timestamp)",
            ])
            return
        case .fresh:
            seenAdvertisementsChanged()
        case .sameRecord:
            break
        }
        // Our own record, seen by our own browser: only its timestamp matters (see init).
        guard opened.deviceID != deviceID else { return }
        resolveGenerations[opened.deviceID, default: 0] += 1
        let update = directory.update(
            name: name, hostTarget: service.hostTarget, addresses: service.addresses,
            port: service.port, txtRecord: opened.plaintext, deviceID: opened.deviceID)
        switch update {
        case .added, .changed:
            logger.info("peer \(update == .added ? "found" : "updated")", metadata: [
                "handoff.peer": "\(directory.peer(named: name)?.name ?? name)",
                "handoff.device": "\(opened.deviceID.shortID)", "handoff.address": "\(service.addresses)", "handoff.port": "\(service.port)",
            ])
        case .ignored(let why):
            logger.info("ignoring service", metadata: ["handoff.peer": "\(name)", "handoff.reason": "\(why)"])
        case .unchanged, .ownAdvertisement:
            break
        }
    }

    /// The peer of a paired device that a verified record put on this instance, if any.
    private func verifiedPeer(instance name: String) -> PeerRecord? {
        guard let peer = directory.peer(instance: name), let id = peer.deviceID, trust.isPaired(id) else { return nil }
        return peer
    }

    /// Saves the seen advertisements now, or when ``SeenAdvertisementsFile/saveInterval`` since
    /// the last save is up.
    func seenAdvertisementsChanged() {
        guard security.stateDirectory != nil else { return }
        let now = ContinuousClock.now
        if let saved = seenAdvertisements.savedAt, now - saved < SeenAdvertisementsFile.saveInterval {
            guard !seenAdvertisements.saveScheduled else { return }
            seenAdvertisements.saveScheduled = true
            let delay = SeenAdvertisementsFile.saveInterval - (now - saved)
            Task {
                try? await Task.sleep(for: delay)
                await self.saveSeenAdvertisements()
            }
            return
        }
        saveSeenAdvertisements()
    }

    private func saveSeenAdvertisements() {
        seenAdvertisements.saveScheduled = false
        seenAdvertisements.savedAt = .now
        guard let directory = security.stateDirectory else { return }
        do { try seenAdvertisements.seen.save(directory: directory) } catch {
            logger.warning("cannot save the seen advertisements: \(error.message)")
        }
    }
}

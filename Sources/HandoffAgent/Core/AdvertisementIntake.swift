import HandoffCore
import HandoffDiscovery
import HandoffTrust
import Logging

/// What the agent believes of the advertisements it browses, as a pure value: which records it
/// takes, which it keeps aside, and what it must do about them. The agent gives it each DNS-SD
/// event with the paired devices and its directory of peers; it updates the directory and
/// returns directives (learn keys, save the seen records now or later), which the agent carries out.
///
/// - A sealed record is opened with the paired devices' advertising keys, and taken only when
///   signed by the device whose key opened it (``SealedAdvertisement/open(_:instanceName:senders:)``)
///   and fresh (``SeenAdvertisements``), never at the cost of a peer already verified on that instance.
/// - A record that cannot be opened (an unpaired device, or a key not learnt yet) is kept aside,
///   and its sender asked for its key.
/// - A goodbye for a paired peer that liveness still finds answering keeps the peer: anyone on the
///   LAN can send a goodbye for any instance name.
struct AdvertisementIntake: Sendable {
    /// What the agent must do after an event.
    enum Directive: Sendable, Equatable {
        /// Ask the senders of unreadable advertisements for their keys (``KeyProbeSchedule`` decides whom).
        case learnKeys
        /// Write the seen advertisements to the state directory now.
        case saveSeenNow
        /// Write them at this instant (a write happened within ``saveInterval``).
        case saveSeen(at: AgentInstant)
        /// Keep where a paired device was found, so a restart reaches it there at once
        /// (``TrustStore/rememberAddresses(_:for:)``).
        case rememberAddresses([PeerAddress], of: DeviceID)
    }

    /// How often, at most, the seen advertisements are written: a change within this time of the
    /// last write is written when the time is up. A crash loses at most this much (a record taken
    /// in the last two seconds could be taken again after a restart, but no older one).
    static let saveInterval: Duration = .seconds(2)

    /// This device, whose own records only move its timestamp on.
    let ownDeviceID: DeviceID
    let logger: Logger
    /// The newest advertisement taken from each device (older ones are replays).
    var seen: SeenAdvertisements
    /// Advertisements this agent cannot open, by instance name.
    var unreadable: [String: UnreadableService] = [:]
    /// How many times DNS-SD resolved each paired device: liveness probes at once when it grows.
    var resolveGenerations: [DeviceID: Int] = [:]
    /// The timestamp of the last record each device pushed over its liveness connection: DNS-SD,
    /// slower, then brings the records before it late, which are no replay worth a warning.
    private(set) var pushedTimestamps: [DeviceID: UInt64] = [:]
    /// The last record each device is known to have sent, and under which instance name: pushed
    /// over a connection pinned to it, or verified by its signature. The same sealed bytes again
    /// under the same name (DNS-SD bringing a record the device pushed, or resolving it again) are
    /// opened without checking the signature a second time (``SealedAdvertisement/open(_:instanceName:senders:provenBy:)``).
    private(set) var provenRecords: [DeviceID: ProvenRecord] = [:]
    /// The instance names under which this agent's browse shows its own verified record now
    /// (`handoff doctor`'s own-service check).
    private(set) var ownInstancesVisible: Set<String> = []
    /// When the seen advertisements were last written, and whether a write is scheduled.
    private(set) var savedAt: AgentInstant?
    private(set) var saveScheduled = false

    /// The peer the last event found or updated, logged by ``logPeerChange()``: the agent logs it
    /// once the change is shown to its watchers, which need not wait the tens of microseconds a
    /// log line takes.
    private(set) var peerChange: PeerChange?

    /// A peer found or updated, as logged.
    struct PeerChange: Sendable, Equatable {
        var found: Bool
        var peer: String
        var deviceID: DeviceID
        var addresses: [String]
        var port: UInt16
        var via: PeerDiscovery
    }

    /// Logs the peer the last event found or updated (``peerChange``), if any, once: a peer found
    /// at info, an update (each change of a peer's activity) at debug, as it comes with every
    /// activity a paired device publishes (formatting it was 7 % of a receiving agent's CPU).
    mutating func logPeerChange() {
        guard let change = peerChange else { return }
        peerChange = nil
        let metadata: () -> Logger.Metadata = {
            ["handoff.peer": "\(change.peer)", "handoff.device": "\(change.deviceID.shortID)", "handoff.address": "\(change.addresses)",
             "handoff.port": "\(change.port)", "handoff.via": "\(change.via.rawValue)"]
        }
        if change.found { logger.info("peer found", metadata: metadata()) } else { logger.debug("peer updated", metadata: metadata()) }
    }

    /// A record whose sender is known (``provenRecords``).
    struct ProvenRecord: Sendable, Equatable {
        var instanceName: String
        /// The sealed box (nonce, ciphertext, tag): a random nonce makes each record's bytes its own.
        var sealed: [UInt8]
    }

    init(ownDeviceID: DeviceID, seen: SeenAdvertisements, logger: Logger) {
        self.ownDeviceID = ownDeviceID
        self.seen = seen
        self.logger = logger
    }

    /// A service was resolved over DNS-SD (or its TXT record changed), or `pushedBy` a device
    /// reached at its address, over a connection pinned to it. A pushed record is taken only when
    /// that device's key opens it: a paired device cannot speak for another. Its signature is not
    /// checked (TLS, pinned to the device's certificate, proves who sent it; docs/SECURITY.md,
    /// "Sealed advertisements"), nor that of a record proven before (``provenRecords``). An `announced` record
    /// came with the device's word that it started (`announce`): like a fresh resolve, it makes
    /// liveness probe at once, and its address is remembered.
    /// `lastKnownHosts`: the hosts a paired device was last found at (``PairedDevice/lastKnownAddresses``),
    /// the addresses of a resolve reported before its address query answered.
    mutating func resolved(_ service: DiscoveredService, pushedBy: DeviceID? = nil, announced: Bool = false,
                           senders: [SealedAdvertisement.Sender], isPaired: (DeviceID) -> Bool,
                           lastKnownHosts: (DeviceID) -> [String] = { _ in [] },
                           directory: inout PeerDirectory, now: AgentInstant) -> [Directive] {
        let name = service.instanceName
        let via: PeerDiscovery = pushedBy == nil ? .dnsSD : .address
        let sealed: SealedAdvertisement.Public
        do { sealed = try SealedAdvertisement.parse(txtRecord: service.txtRecord) } catch {
            unreadable.removeValue(forKey: name)
            if let kept = Self.verifiedPeer(instance: name, directory, isPaired) {
                logger.warning("ignoring a record that is not a readable handoff advertisement on a paired peer's instance; keeping the peer", metadata: [
                    "handoff.peer": "\(kept.name)", "handoff.reason": "\(error)",
                ])
                return []
            }
            if directory.remove(name: name) != nil { logger.info("peer gone", metadata: ["handoff.peer": "\(name)"]) }
            logger.debug("ignoring service", metadata: ["handoff.peer": "\(name)", "handoff.reason": "\(error)"])
            return []
        }
        let provenBy = pushedBy ?? provenRecords.first { $0.value.instanceName == name && $0.value.sealed == sealed.sealed }?.key
        switch SealedAdvertisement.open(sealed, instanceName: name, senders: senders, provenBy: provenBy) {
        case .opened(let opened):
            unreadable.removeValue(forKey: name)
            if let pushedBy, opened.deviceID != pushedBy {
                logger.warning("ignoring an advertisement a paired device pushed for another device", metadata: [
                    "handoff.device": "\(pushedBy.shortID)", "handoff.claimed": "\(opened.deviceID.shortID)",
                ])
                return []
            }
            provenRecords[opened.deviceID] = ProvenRecord(instanceName: name, sealed: sealed.sealed)
            return take(opened, from: service, via: via, announced: announced, lastKnownHosts: lastKnownHosts(opened.deviceID),
                        directory: &directory, now: now)
        case .forged(let claimed):
            // Sealed with a paired device's key but not signed by it: another holder of the key
            // (a paired device gone bad), or a genuine record moved to another instance name.
            if let sealedFor = Self.nameBeforeRename(sealed, instance: name, device: claimed, senders: senders) {
                // Avahi renamed the device's instance and announced it with the record sealed for
                // the old name; the device seals it again for the new one at once. Taken as
                // little as a forgery (the name binding stays exact), but no sign of one.
                logger.info("ignoring an advertisement sealed for the name its instance had before an Avahi rename, until its device seals it for this one", metadata: [
                    "handoff.peer": "\(name)", "handoff.sealed.name": "\(sealedFor)", "handoff.device": "\(claimed.shortID)",
                ])
                return []
            }
            logger.warning("ignoring a forged advertisement: it is sealed with a paired device's key but not signed by that device for this instance", metadata: [
                "handoff.peer": "\(name)", "handoff.device": "\(claimed.shortID)", "handoff.address": "\(service.addresses)",
            ])
            return []
        case .unverified, .unreadable:
            // A key not learnt yet (or rotated), or an unpaired device. A peer verified on this
            // instance keeps what it said until its device is heard from again: a stranger's record
            // for the same name must not remove it. The key is asked for, as it may have rotated.
            let isNew = unreadable[name] == nil
            unreadable[name, default: UnreadableService(service: service)].service = service
            unreadable[name]?.pushedBy = pushedBy
            if let kept = Self.verifiedPeer(instance: name, directory, isPaired) {
                logger.info("kept a paired peer whose instance now carries a record this agent cannot verify; asking for its key", metadata: [
                    "handoff.peer": "\(kept.name)",
                ])
            } else if isNew {
                logger.debug("sealed advertisement from an unknown device", metadata: ["handoff.peer": "\(name)"])
            }
            return [.learnKeys]
        }
    }

    /// A DNS-SD goodbye (or expiry) for an instance. A paired peer that liveness still finds
    /// answering is kept until liveness finds it gone: only the device can answer a ping pinned
    /// to its certificate.
    mutating func removed(_ name: String, isPaired: (DeviceID) -> Bool, directory: inout PeerDirectory) {
        unreadable.removeValue(forKey: name)
        ownInstancesVisible.remove(name)
        if let peer = Self.verifiedPeer(instance: name, directory, isPaired), directory.isReachable(peer), directory.keepAfterGoodbye(name: name) {
            logger.info("goodbye for a paired peer that still answers: kept until liveness finds it gone", metadata: ["handoff.peer": "\(peer.name)"])
            return
        }
        if let peer = directory.remove(name: name) { logger.info("peer gone", metadata: ["handoff.peer": "\(peer.name)"]) }
    }

    /// A device is no longer paired: its records are forgotten.
    mutating func forget(_ id: DeviceID, now: AgentInstant) -> [Directive] {
        pushedTimestamps.removeValue(forKey: id)
        provenRecords.removeValue(forKey: id)
        return seen.forget(id) ? seenChanged(now: now) : []
    }

    /// The seen advertisements changed: write them now, or at the end of ``saveInterval`` after
    /// the last write (once).
    mutating func seenChanged(now: AgentInstant) -> [Directive] {
        if let savedAt, savedAt.duration(to: now) < Self.saveInterval {
            guard !saveScheduled else { return [] }
            saveScheduled = true
            return [.saveSeen(at: savedAt.advanced(by: Self.saveInterval))]
        }
        return [.saveSeenNow]
    }

    /// The seen advertisements are being written now.
    mutating func saving(now: AgentInstant) {
        saveScheduled = false
        savedAt = now
    }

    /// Takes a verified record, unless it is a replay.
    private mutating func take(_ opened: SealedAdvertisement.Opened, from service: DiscoveredService, via: PeerDiscovery,
                               announced: Bool, lastKnownHosts: [String], directory: inout PeerDirectory, now: AgentInstant) -> [Directive] {
        let name = service.instanceName
        var directives: [Directive] = []
        switch seen.admit(opened.deviceID, timestamp: opened.timestamp, instanceName: name) {
        case .replay(let last) where via == .dnsSD && pushedTimestamps[opened.deviceID] == last.timestamp && last.instanceName == name:
            // The device pushed a newer record on its liveness connection: DNS-SD is behind. The
            // newer one stays (never rolled back), and nothing changes.
            logger.debug("ignoring an older advertisement DNS-SD brought after a newer one was pushed", metadata: [
                "handoff.peer": "\(name)", "handoff.device": "\(opened.deviceID.shortID)",
                "handoff.timestamp": "\(opened.timestamp)", "handoff.last": "\(last.timestamp)",
            ])
            return []
        case .replay(let last):
            logger.info("ignoring a replayed advertisement", metadata: [
                "handoff.peer": "\(name)", "handoff.device": "\(opened.deviceID.shortID)",
                "handoff.timestamp": "\(opened.timestamp)", "handoff.last": "\(last.timestamp)",
            ])
            return []
        case .fresh:
            directives = seenChanged(now: now)
            if via == .address { pushedTimestamps[opened.deviceID] = opened.timestamp } else { pushedTimestamps.removeValue(forKey: opened.deviceID) }
        case .sameRecord:
            break
        }
        // Our own record, seen by our own browser: only its timestamp matters.
        guard opened.deviceID != ownDeviceID else {
            ownInstancesVisible.insert(name)
            return directives
        }
        // A fresh resolve (or an announce) makes liveness probe at once; a pushed record came
        // over its connection.
        let found = via == .dnsSD || announced
        if found { resolveGenerations[opened.deviceID, default: 0] += 1 }
        let update = directory.update(
            name: name, hostTarget: service.hostTarget, addresses: service.addresses,
            port: service.port, txtRecord: opened.plaintext, deviceID: opened.deviceID, via: via, unansweredAddresses: lastKnownHosts)
        switch update {
        case .added, .changed:
            peerChange = PeerChange(found: update == .added, peer: directory.peer(named: name)?.name ?? name, deviceID: opened.deviceID,
                                    addresses: service.addresses, port: service.port, via: via)
        case .ignored(let why):
            logger.info("ignoring service", metadata: ["handoff.peer": "\(name)", "handoff.reason": "\(why)"])
            return directives
        case .unchanged, .ownAdvertisement:
            break
        }
        let addresses = IPAddressText.connectionOrder(service.addresses).map { PeerAddress(host: $0, port: Int(service.port)) }
        if found, !addresses.isEmpty { directives.append(.rememberAddresses(addresses, of: opened.deviceID)) }
        return directives
    }

    /// The name before a rename of `instance` (``AlternativeServiceName/namesBeforeRename(_:)``)
    /// that `sealed` is signed for by `device`, if any: a genuine record the rename left sealed for
    /// the old name. Nothing is taken from it either.
    static func nameBeforeRename(_ sealed: SealedAdvertisement.Public, instance: String, device: DeviceID,
                                 senders: [SealedAdvertisement.Sender]) -> String? {
        let sender = senders.filter { $0.deviceID == device }
        return AlternativeServiceName.namesBeforeRename(instance).first { old in
            guard case .opened(let opened) = SealedAdvertisement.open(sealed, instanceName: old, senders: sender) else { return false }
            return opened.deviceID == device
        }
    }

    /// The peer of a paired device that a verified record put on this instance, if any.
    static func verifiedPeer(instance name: String, _ directory: PeerDirectory, _ isPaired: (DeviceID) -> Bool) -> PeerRecord? {
        guard let peer = directory.peer(instance: name), let id = peer.deviceID, isPaired(id) else { return nil }
        return peer
    }
}

import Foundation
import HandoffCore
import HandoffDiscovery
import HandoffTrust
import Testing

@testable import HandoffAgent

@Suite("AdvertisementIntake and AdvertisementSealing")
struct AdvertisementCoreTests {
    let t0 = AgentInstant(sinceStart: .seconds(100))
    let senders = [SealedAdvertisement.Sender(deviceID: TestPeer.deviceID, advertisingKey: TestPeer.key, publicKey: TestPeer.peerIdentity.publicKey)]

    func intake() -> AdvertisementIntake {
        AdvertisementIntake(ownDeviceID: TestPeer.identity.deviceID, seen: SeenAdvertisements(), logger: quietLogger)
    }

    func record(_ n: Int, timestamp: UInt64, instance: String = "kitchen") -> DiscoveredService {
        let txt = TestPeer.seal(Sample.txt(agent: "peer-kitchen", seq: UInt64(n), current: Sample.activity(n)), instanceName: instance, timestamp: timestamp)
        return AdvertisementTrustTests.service(instance, txt)
    }

    @Test("a fresh record of a paired device is taken and saved, and where it was found is remembered; an older one is a replay and changes nothing")
    func freshAndReplay() {
        var intake = intake()
        var directory = PeerDirectory(ownAgentID: "self")
        let service = record(2, timestamp: 2_000)
        let r1 = intake.resolved(service, senders: senders, isPaired: { _ in true }, directory: &directory, now: t0)
        let found = service.addresses.map { PeerAddress(host: $0, port: Int(service.port)) }
        #expect(!found.isEmpty)
        #expect(r1
            == [.saveSeenNow, .rememberAddresses(found, of: TestPeer.deviceID)])
        intake.saving(now: t0)
        #expect(directory.peer(instance: "kitchen")?.advertisement.current?.id == Sample.id(2))
        let r2 = intake.resolved(record(1, timestamp: 1_000), senders: senders, isPaired: { _ in true }, directory: &directory, now: t0)
        #expect(r2 == [])
        #expect(directory.peer(instance: "kitchen")?.advertisement.current?.id == Sample.id(2))
        #expect(intake.resolveGenerations[TestPeer.deviceID] == 1)
    }

    @Test("a record pushed on a subscription is not remembered as an address; an announced one is, and makes liveness probe at once")
    func announcedRecords() {
        var intake = intake()
        var directory = PeerDirectory(ownAgentID: "self")
        let pushed = intake.resolved(record(2, timestamp: 2_000), pushedBy: TestPeer.deviceID, senders: senders, isPaired: { _ in true },
                                     directory: &directory, now: t0)
        #expect(pushed == [.saveSeenNow])
        #expect(intake.resolveGenerations[TestPeer.deviceID] == nil)
        intake.saving(now: t0)
        let service = record(3, timestamp: 3_000)
        let announced = intake.resolved(service, pushedBy: TestPeer.deviceID, announced: true, senders: senders, isPaired: { _ in true },
                                        directory: &directory, now: t0.advanced(by: .seconds(5)))
        #expect(announced == [.saveSeenNow, .rememberAddresses(service.addresses.map { PeerAddress(host: $0, port: Int(service.port)) }, of: TestPeer.deviceID)])
        #expect(intake.resolveGenerations[TestPeer.deviceID] == 1)
        #expect(directory.peer(instance: "kitchen")?.via == .address)
    }

    @Test("this agent's own record in its browse is visible (for doctor) and not a peer; a goodbye hides it")
    func ownRecordVisible() {
        var intake = AdvertisementIntake(ownDeviceID: TestPeer.deviceID, seen: SeenAdvertisements(), logger: quietLogger)
        var directory = PeerDirectory(ownAgentID: "self")
        #expect(intake.ownInstancesVisible.isEmpty)
        _ = intake.resolved(record(1, timestamp: 1_000), senders: senders, isPaired: { _ in true }, directory: &directory, now: t0)
        #expect(intake.ownInstancesVisible == ["kitchen"])
        #expect(directory.all.isEmpty)
        intake.removed("kitchen", isPaired: { _ in true }, directory: &directory)
        #expect(intake.ownInstancesVisible.isEmpty)
    }

    @Test("a second change within the save interval is saved once, when the interval is up")
    func saveSchedule() {
        var intake = intake()
        let r3 = intake.seenChanged(now: t0)
        #expect(r3 == [.saveSeenNow])
        intake.saving(now: t0)
        let soon = t0.advanced(by: .milliseconds(500))
        let r4 = intake.seenChanged(now: soon)
        #expect(r4 == [.saveSeen(at: t0.advanced(by: AdvertisementIntake.saveInterval))])
        let r5 = intake.seenChanged(now: soon)
        #expect(r5 == [], "already scheduled")
        intake.saving(now: t0.advanced(by: .seconds(2)))
        let r6 = intake.seenChanged(now: t0.advanced(by: .seconds(5)))
        #expect(r6 == [.saveSeenNow])
    }

    @Test("a record no paired key opens is kept aside and its key asked for; a goodbye forgets it")
    func unreadable() {
        var intake = intake()
        var directory = PeerDirectory(ownAgentID: "self")
        let r7 = intake.resolved(record(1, timestamp: 1_000), senders: [], isPaired: { _ in false }, directory: &directory, now: t0)
        #expect(r7 == [.learnKeys])
        #expect(intake.unreadable["kitchen"] != nil)
        #expect(directory.all.isEmpty)
        intake.removed("kitchen", isPaired: { _ in false }, directory: &directory)
        #expect(intake.unreadable.isEmpty)
    }

    @Test("each seal's timestamp is later than the last, even when the wall clock goes back; an unchanged input is not sealed again")
    func sealing() throws {
        let input = SealInput(plaintext: Sample.txt(agent: "me", seq: 0, current: nil), pairingName: nil, key: AdvertisingKey.random(),
                              instanceName: "handoff-me")
        var sealing = AdvertisementSealing(input, identity: TestPeer.identity, now: Sample.now, ownLast: 0)
        let first = sealing.timestamp
        #expect(first == UInt64(Sample.now.timeIntervalSince1970 * 1000))
        let r8 = sealing.reseal(input, now: Sample.now)
        #expect(r8 == nil)
        var changed = input
        changed.plaintext = Sample.txt(agent: "me", seq: 1, current: Sample.activity(1))
        let r9 = sealing.reseal(changed, now: Sample.now.addingTimeInterval(-3600))
        #expect(r9 != nil)
        #expect(sealing.timestamp == first + 1)
        // After a restart, past the newest record peers may hold.
        let restarted = AdvertisementSealing(input, identity: TestPeer.identity, now: Sample.now, ownLast: first + 10)
        #expect(restarted.timestamp == first + 11)
    }

    @Test("what is advertised: the current activity and the store's sequence; the name for pairing only while a window is open")
    func whatIsAdvertised() throws {
        var store = ActivityStore()
        store.publish(Sample.activity(3, title: "Draft"))
        let key = AdvertisingKey.random()
        let closed = AdvertisementSealing.input(store, agentID: "me", name: "desk", pairingOpen: false, key: key, instanceName: "handoff-me", now: Sample.now)
        let open = AdvertisementSealing.input(store, agentID: "me", name: "desk", pairingOpen: true, key: key, instanceName: "handoff-me", now: Sample.now)
        #expect(closed.pairingName == nil)
        #expect(open.pairingName == "desk")
        #expect(closed.plaintext == open.plaintext)
        let advertised = try ActivityAdvertisement(txtRecord: closed.plaintext)
        #expect(advertised.current?.id == Sample.id(3))
        #expect(advertised.sequence == store.sequence)
    }

    @Test("a record pushed by its own device is taken as known by address, without a fresh-resolve probe")
    func pushedByItsDevice() {
        var intake = intake()
        var directory = PeerDirectory(ownAgentID: "self")
        _ = intake.resolved(record(1, timestamp: 1_000), pushedBy: TestPeer.deviceID, senders: senders, isPaired: { _ in true },
                            directory: &directory, now: t0)
        #expect(directory.peer(instance: "kitchen")?.via == .address)
        #expect(directory.peer(instance: "kitchen")?.advertisement.current?.id == Sample.id(1))
        #expect(intake.resolveGenerations[TestPeer.deviceID] == nil, "liveness already holds the connection it came over")
    }

    @Test("a peer found or updated is kept for the agent to log once its watchers have the change, then logged once")
    func peerChangeLoggedLater() {
        var intake = intake()
        var directory = PeerDirectory(ownAgentID: "self")
        let service = record(1, timestamp: 1_000)
        _ = intake.resolved(service, senders: senders, isPaired: { _ in true }, directory: &directory, now: t0)
        #expect(intake.peerChange == .init(found: true, peer: directory.peer(instance: "kitchen")?.name ?? "", deviceID: TestPeer.deviceID,
                                           addresses: service.addresses, port: service.port, via: .dnsSD))
        intake.logPeerChange()
        #expect(intake.peerChange == nil)
        _ = intake.resolved(record(2, timestamp: 2_000), pushedBy: TestPeer.deviceID, senders: senders, isPaired: { _ in true },
                            directory: &directory, now: t0)
        #expect(intake.peerChange?.found == false, "updated")
    }

    @Test("a paired device cannot push another device's record: it is refused")
    func pushedByAnother() {
        var intake = intake()
        var directory = PeerDirectory(ownAgentID: "self")
        let other = TestPeer.identity.deviceID
        let directives = intake.resolved(record(1, timestamp: 1_000), pushedBy: other, senders: senders, isPaired: { _ in true },
                                         directory: &directory, now: t0)
        #expect(directives == [])
        #expect(directory.all.isEmpty)
    }

    @Test("while DNS-SD shows a peer, a pushed record brings its news but keeps DNS-SD's address")
    func dnsSDKeepsItsAddress() {
        var intake = intake()
        var directory = PeerDirectory(ownAgentID: "self")
        _ = intake.resolved(record(1, timestamp: 1_000), senders: senders, isPaired: { _ in true }, directory: &directory, now: t0)
        var pushed = record(2, timestamp: 2_000)
        pushed.addresses = ["192.0.2.77"]
        _ = intake.resolved(pushed, pushedBy: TestPeer.deviceID, senders: senders, isPaired: { _ in true }, directory: &directory, now: t0)
        let peer = directory.peer(instance: "kitchen")
        #expect(peer?.via == .dnsSD)
        #expect(peer?.addresses != ["192.0.2.77"])
        #expect(peer?.advertisement.current?.id == Sample.id(2))
    }
}

import Foundation
import HandoffConfiguration
import HandoffCore
import HandoffDiscovery
import HandoffTrust
import Testing

@testable import HandoffAgent

/// Review findings 10 and 11 at the agent: what reaches `handoff list` and `handoff peers` when a
/// paired device gone bad or a LAN attacker publishes records for another device.
@Suite("Agent: advertisements cannot be forged, replayed or used to hide a device")
struct AdvertisementTrustTests {
    /// B: a second paired device gone bad. It holds the test peer's advertising key (the test
    /// peer gives it to every device it pairs with).
    static let rogue: DeviceIdentity = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-unit-rogue-\(UUID().uuidString.prefix(8))").path
        return try! DeviceIdentity.loadOrCreate(directory: directory, commonName: "rogue")
    }()
    static let rogueKey = AdvertisingKey.random()

    /// An agent paired with the test peer and with the rogue device (both keys known).
    static func agentPairedWithRogue() async throws -> Agent {
        let agent = makeAgent()
        _ = try await agent.trustAdd(rogue.deviceID, name: "rogue", advertisingKey: rogueKey, certificateDER: rogue.certificateDER)
        return agent
    }

    static func service(_ name: String, _ txt: [UInt8], address: String = "127.0.0.1") -> DiscoveredService {
        DiscoveredService(instanceName: name, serviceType: "_handoffunit._tcp", domain: "local.", hostTarget: "\(name).local.", port: 7200,
                          txtRecord: txt, addresses: [address], interfaceIndex: 2)
    }

    static func listed(_ agent: Agent) async -> [String] {
        await agent.listJSON().arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
    }

    static func peerInstances(_ agent: Agent) async -> [String] {
        await agent.peersJSON().arrayValue?.compactMap { $0["instanceName"]?.stringValue } ?? []
    }

    @Test("B seals records with the test peer's key: not attributed to it, and its real activity stays",
          arguments: ["kitchen", "rogue-instance"])
    func forgedByAnotherPairedDevice(_ instance: String) async throws {
        let agent = try await Self.agentPairedWithRogue()
        let real = Sample.activity(1, title: "Real")
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: real)))
        // The review's attack: a huge timestamp, on the real instance or another, from B's address.
        let fake = Sample.txt(agent: "peer-kitchen", seq: 9, current: Sample.activity(2, title: "Pay here"))
        let forged = TestPeer.seal(fake, instanceName: instance, timestamp: .max - 1, signer: Self.rogue)
        await agent.handle(.resolved(Self.service(instance, forged, address: "10.6.6.6")))
        #expect(await Self.listed(agent) == ["Real"])
        #expect(await Self.peerInstances(agent) == ["kitchen"])
        #expect(await agent.peersJSON().arrayValue?.first?["addresses"] == .array([.string("127.0.0.1")]))
        // The peer's next genuine record is still taken (the forged timestamp was not recorded).
        let next = Sample.activity(3, title: "Next")
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 2, offering: next)))
        #expect(await Self.listed(agent) == ["Next"])
    }

    @Test("a `keys` message carrying another paired device's key, or this device's own, is refused")
    func keysOfAnotherDeviceRefused() async throws {
        let agent = try await Self.agentPairedWithRogue()
        for claimed in [TestPeer.key, await agent.advertisingKey] {
            let answer = await agent.receivedAdvertisingKey(claimed.bytes, from: Self.rogue.deviceID, certificateDER: Self.rogue.certificateDER)
            #expect(answer == nil, "nothing is sent back")
            #expect(await agent.trust.device(Self.rogue.deviceID)?.advertisingKey == Self.rogueKey)
        }
        // The test peer's records still go to the test peer.
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: Sample.activity(1, title: "Real"))))
        #expect(await agent.peersJSON().arrayValue?.first?["deviceID"] == .string(TestPeer.deviceID.description))
        // Provisioning with another device's key is refused as well.
        let other = DeviceID(certificateDER: Array("another device".utf8))
        await #expect(throws: HandoffError.self) { try await agent.trustAdd(other, name: "x", advertisingKey: TestPeer.key) }
        #expect(await agent.isPaired(other) == false)
        // A key of its own is taken, with the public key from its certificate.
        let fresh = AdvertisingKey.random()
        #expect(await agent.receivedAdvertisingKey(fresh.bytes, from: Self.rogue.deviceID, certificateDER: Self.rogue.certificateDER) != nil)
        #expect(await agent.trust.device(Self.rogue.deviceID)?.advertisingKey == fresh)
        #expect(await agent.trust.device(Self.rogue.deviceID)?.publicKey == Self.rogue.publicKey)
    }

    @Test("the key exchange records the public key only from the device's own certificate")
    func publicKeyFromCertificate() async throws {
        let agent = makeAgent()
        let id = Self.rogue.deviceID
        _ = try await agent.trustAdd(id, name: "rogue")
        // A certificate that is not the device's (the test peer's) teaches nothing.
        _ = await agent.receivedAdvertisingKey(Self.rogueKey.bytes, from: id, certificateDER: TestPeer.peerIdentity.certificateDER)
        #expect(await agent.trust.device(id)?.publicKey == nil)
        _ = await agent.receivedAdvertisingKey(Self.rogueKey.bytes, from: id, certificateDER: Self.rogue.certificateDER)
        #expect(await agent.trust.device(id)?.publicKey == Self.rogue.publicKey)
    }

    @Test("a record with the last timestamp on another instance is a replay; the same record re-resolved is taken")
    func equalTimestamp() async {
        let agent = makeAgent()
        let txt = Sample.txt(agent: "peer-kitchen", seq: 1, current: Sample.activity(1, title: "Real"))
        let genuine = Self.service("kitchen", TestPeer.seal(txt, instanceName: "kitchen", timestamp: 5_000))
        await agent.handle(.resolved(genuine))
        // Avahi resolves the same record again (cache refresh, another interface): still the peer.
        await agent.handle(.resolved(genuine))
        await agent.handle(.resolved(Self.service("kitchen", genuine.txtRecord, address: "127.0.0.2")))
        #expect(await Self.peerInstances(agent) == ["kitchen"])
        #expect(await agent.peersJSON().arrayValue?.first?["addresses"] == .array([.string("127.0.0.2")]))
        // The same TXT under another name fails its signature; one signed for that name with the
        // same timestamp is a replay; an older one too.
        await agent.handle(.resolved(Self.service("attacker", genuine.txtRecord, address: "10.6.6.6")))
        let other = Sample.txt(agent: "peer-kitchen", seq: 2, current: Sample.activity(2, title: "Old"))
        await agent.handle(.resolved(Self.service("attacker", TestPeer.seal(other, instanceName: "attacker", timestamp: 5_000), address: "10.6.6.6")))
        await agent.handle(.resolved(Self.service("kitchen", TestPeer.seal(other, instanceName: "kitchen", timestamp: 4_999))))
        #expect(await Self.peerInstances(agent) == ["kitchen"])
        #expect(await Self.listed(agent) == ["Real"])
    }

    @Test("a record this agent cannot read on a verified peer's instance does not remove the peer",
          arguments: ["stranger key", "not sealed", "old version", "unknown signer"])
    func spoofedRecordOnVerifiedInstance(_ kind: String) async {
        let agent = makeAgent()
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: Sample.activity(1, title: "Real"))))
        let fake = Sample.txt(agent: "peer-kitchen", seq: 9, current: Sample.activity(2, title: "Fake"))
        let txt: [UInt8] = switch kind {
        case "stranger key": TestPeer.seal(fake, instanceName: "kitchen", timestamp: .max, key: .random())
        case "not sealed": fake
        case "old version": [3] + Array("v=2".utf8) + [6] + Array("s0=AAA".utf8)
        default: TestPeer.seal(fake, instanceName: "kitchen", timestamp: .max, signer: Self.rogue)
        }
        await agent.handle(.resolved(Self.service("kitchen", txt, address: "10.6.6.6")))
        #expect(await Self.listed(agent) == ["Real"])
        #expect(await agent.peersJSON().arrayValue?.first?["addresses"] == .array([.string("127.0.0.1")]))
    }

    @Test("a goodbye for a paired peer that still answers keeps it; liveness finding it gone removes it")
    func goodbye() async {
        let agent = makeAgent()
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: Sample.activity(1, title: "Real"))))
        await agent.handle(.removed(instanceName: "kitchen"))
        #expect(await Self.listed(agent) == ["Real"])
        await agent.setReachability(TestPeer.deviceID, reachable: false, lastHeard: nil)
        #expect(await Self.peerInstances(agent) == [])

        // Heard again after a goodbye: the goodbye no longer counts.
        await agent.setReachability(TestPeer.deviceID, reachable: true, lastHeard: nil)
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 2, offering: Sample.activity(2, title: "Again"))))
        await agent.handle(.removed(instanceName: "kitchen"))
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 3, offering: Sample.activity(3, title: "Back"))))
        await agent.setReachability(TestPeer.deviceID, reachable: false, lastHeard: nil)
        #expect(await Self.peerInstances(agent) == ["kitchen"], "unreachable, but DNS-SD still lists it")

        // A goodbye for a peer liveness already finds unreachable removes it at once.
        await agent.handle(.removed(instanceName: "kitchen"))
        #expect(await Self.peerInstances(agent) == [])
    }

    @Test("after a restart, a device's older records are still replays and its current one is still taken")
    func persistedAcrossRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-unit-seen-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func start() throws -> Agent {
            let trust = TrustStore(devices: [PairedDevice(deviceID: TestPeer.deviceID, name: "test peer", advertisingKey: TestPeer.key,
                                                          publicKey: TestPeer.peerIdentity.publicKey)])
            let security = try AgentSecurity(identity: TestPeer.identity, trust: trust, seen: SeenAdvertisements.load(directory: directory),
                                             stateDirectory: directory)
            var configuration = AgentConfiguration(name: "unit-host", socketPath: "/tmp/handoff-unit-unused.sock")
            configuration.serviceType = "_handoffunit._tcp"
            return Agent(configuration: configuration, port: 7123,
                         transport: UnitTestTransport(pinned: RefusingConnector(), configuration: configuration, security: security),
                         logger: quietLogger, security: security)
                .runningBackgroundWork()
        }
        let old = Self.service("kitchen", TestPeer.seal(Sample.txt(agent: "peer-kitchen", seq: 1, current: Sample.activity(1, title: "Old")),
                                                        instanceName: "kitchen", timestamp: 7_000))
        let current = Self.service("kitchen", TestPeer.seal(Sample.txt(agent: "peer-kitchen", seq: 2, current: Sample.activity(2, title: "Current")),
                                                            instanceName: "kitchen", timestamp: 8_000))
        let first = try start()
        await first.handle(.resolved(old))
        await first.handle(.resolved(current))
        // The second change came within the save interval: it is written when that is up (polled,
        // as the test process may be busy).
        let expected = SeenAdvertisements.Last(timestamp: 8_000, instanceName: "kitchen")
        for _ in 0..<200 where try SeenAdvertisements.load(directory: directory).last[TestPeer.deviceID] != expected {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try SeenAdvertisements.load(directory: directory).last[TestPeer.deviceID] == expected)

        let restarted = try start()
        await restarted.handle(.resolved(old))
        #expect(await Self.listed(restarted) == [], "an old record captured before the restart is a replay")
        await restarted.handle(.resolved(current))
        #expect(await Self.listed(restarted) == ["Current"])
    }

    @Test("a pairing stores the public key of the certificate the device presented, so its records are believed at once")
    func pairingStoresThePublicKey() async throws {
        let agent = makeAgent()
        _ = try await agent.completePairing(with: Self.rogue.deviceID, name: "rogue", key: AdvertisingKey.random().bytes,
                                            certificateDER: Self.rogue.certificateDER)
        #expect(await agent.trust.device(Self.rogue.deviceID)?.publicKey != nil)
        // A certificate that is not the device's (its hash is another ID) gives no key.
        let other = makeAgent()
        _ = try await other.completePairing(with: Self.rogue.deviceID, name: "rogue", key: AdvertisingKey.random().bytes,
                                            certificateDER: TestPeer.peerIdentity.certificateDER)
        #expect(await other.trust.device(Self.rogue.deviceID)?.publicKey == nil)
        #expect(await other.isPaired(Self.rogue.deviceID), "paired all the same; the key is learnt by a key exchange")
    }
}

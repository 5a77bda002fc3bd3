import Foundation
import HandoffCore
import HandoffTestSupport
import HandoffTransport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// A rotated advertising key reaches the paired devices at once, on liveness's pinned
/// connections, instead of waiting for their key probes' back-off. In memory, on a manual clock.
@Suite("Whole agents in memory: a rotated advertising key is announced", .timeLimit(.minutes(1)))
struct InMemoryKeyAnnouncementTests {
    @Test("alpha unpairs charlie: its key rotates, bravo is told the new key on alpha's liveness connection, charlie is not")
    func unpairingAnnouncesTheNewKey() async throws {
        let network = InMemoryNetwork()
        let keys = (alpha: AdvertisingKey.random(), bravo: AdvertisingKey.random(), charlie: AdvertisingKey.random())
        let alpha = InMemoryHost("alpha", host: "10.0.0.1", network: network,
                                 paired: [InMemoryHost.device("bravo", advertisingKey: keys.bravo), InMemoryHost.device("charlie", advertisingKey: keys.charlie)],
                                 advertisingKey: keys.alpha)
        let bravo = InMemoryHost("bravo", host: "10.0.0.2", network: network, paired: [InMemoryHost.device("alpha", advertisingKey: keys.alpha)],
                                 advertisingKey: keys.bravo)
        let charlie = InMemoryHost("charlie", host: "10.0.0.3", network: network, paired: [InMemoryHost.device("alpha", advertisingKey: keys.alpha)],
                                   advertisingKey: keys.charlie)
        let probes = ProbeCounter(alpha.transport)
        let liveness = LivenessService(agent: alpha.agent, connector: probes, clock: alpha.clock,
                                       timing: InMemoryAddressedPeerTests.timing, logger: quietLogger)
        try await InMemoryLab.run([alpha, bravo, charlie]) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                await alpha.discover(bravo)
                await alpha.discover(charlie)
                group.addTask { try await liveness.run() }
                defer { group.cancelAll() }
                let alphaID = alpha.identity.deviceID
                // Both connections are up (several pongs each) before the unpairing.
                #expect(try await InMemoryAddressedPeerTests.tick(alpha) { probes.pongs.load(ordering: .acquiring) >= 6 })
                _ = try await alpha.agent.trustRemove(charlie.identity.deviceID)
                let rotated = await alpha.agent.advertisingKey
                #expect(rotated != keys.alpha)
                #expect(try await InMemoryAddressedPeerTests.tick(alpha) { await bravo.agent.trust.device(alphaID)?.advertisingKey == rotated })
                #expect(await charlie.agent.trust.device(alphaID)?.advertisingKey == keys.alpha, "the unpaired device never learns it")

                // bravo reads alpha's next record, sealed with the new key, at once.
                let id = try await alpha.agent.publish(Sample.activity(7, title: "After the rotation"))
                await bravo.discover(alpha)
                #expect(await bravo.agent.offered().map(\.id) == [id])
            }
        }
    }
}

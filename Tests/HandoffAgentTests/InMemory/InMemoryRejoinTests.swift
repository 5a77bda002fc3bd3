import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// An agent that starts reaches its paired devices at the addresses they were last found at,
/// before DNS-SD shows anything, and tells them it is back (`announce`). In memory, on bravo's
/// manual clock: bravo is the agent that just started.
@Suite("Whole agents in memory: a starting agent rejoins its paired devices at once", .timeLimit(.minutes(1)))
struct InMemoryRejoinTests {
    @Test("bravo reaches alpha at its last known address with no DNS-SD: it lists alpha's note, and alpha lists bravo from its announce")
    func rejoinsAtLastKnownAddress() async throws {
        let hosts = InMemoryContinueTests.Hosts(alphaLastKnown: [PeerAddress(host: "10.0.0.1", port: 7000)])
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { editorApp in
            let note = try await hosts.publishNote(editorApp, discover: false)
            let (alpha, bravo) = (hosts.alpha.agent, hosts.bravo.agent)
            #expect(try await InMemoryAddressedPeerTests.tick(hosts.bravo) { await bravo.offered().map(\.id) == [note.identifier] })
            #expect(await eventually { await alpha.peers().map(\.name) == ["bravo"] })
            let bravoOnAlpha = try #require(await alpha.peers().first)
            #expect(bravoOnAlpha.via == "address")
            #expect(bravoOnAlpha.addresses == ["10.0.0.2"])
            #expect(bravoOnAlpha.port == 7000)
            #expect(bravoOnAlpha.reachable)
            // alpha keeps where bravo announced itself from, for its own next start.
            let bravoID = hosts.bravo.identity.deviceID
            #expect(await alpha.trust.device(bravoID)?.lastKnownAddresses == [PeerAddress(host: "10.0.0.2", port: 7000)])
            #expect(await alpha.livenessTargets()[bravoID]?.subscribes == true, "alpha reaches bravo where it announced itself")

            // A continue works over the rejoined connection's endpoint.
            let result = try await bravo.continueActivity(id: note.identifier).get()
            #expect(result.peer == "alpha")

            // A goodbye from bravo (its agent stops) makes alpha forget what it announced, and
            // stop reaching it there. (Said here as alpha's session would say it on the frame.)
            let alphaSide = hosts.alpha.agent
            await alphaSide.receivedGoodbye(from: bravoID)
            #expect(await alphaSide.peers().isEmpty)
            #expect(await alphaSide.livenessTargets()[bravoID] == nil)

            // DNS-SD shows alpha to bravo: it is the way from now on, without a subscription.
            await hosts.bravo.discover(hosts.alpha)
            #expect(try await InMemoryAddressedPeerTests.tick(hosts.bravo) { await bravo.livenessTargets().values.map(\.subscribes) == [false] })
            #expect(await !bravo.rejoining.reachesAtLastKnownAddresses(hosts.alpha.identity.deviceID))
        }
    }

    @Test("a device that is not at its last known address is tried there during the rejoin window only, and is never listed for it")
    func absentDeviceIsDropped() async throws {
        let hosts = InMemoryContinueTests.Hosts(alphaLastKnown: [PeerAddress(host: "10.0.0.9", port: 7000)])
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { (_: HandoffApplication) async throws in
            let bravo = hosts.bravo.agent
            #expect(await bravo.livenessTargets().count == 1)
            // 3 s: several attempts refused, still tried (it may be starting too).
            #expect(try await !InMemoryAddressedPeerTests.tick(hosts.bravo, until: { await bravo.livenessTargets().isEmpty }, ticks: 60))
            #expect(await bravo.peers().isEmpty, "not listed for a refused address")
            #expect(try await InMemoryAddressedPeerTests.tick(hosts.bravo, until: { await bravo.livenessTargets().isEmpty }, ticks: 400),
                    "dropped once the window has passed")
            #expect(await bravo.peers().isEmpty)
        }
    }
}

import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import HandoffTransport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// Which instances' records reach bravo by push (``Agent/pushedInstances``), which bravo's browser
/// then does not query: alpha's, from the moment bravo's liveness connection subscribed and got
/// its record, until that connection is gone. In memory, on bravo's manual clock.
@Suite("Whole agents in memory: the instances whose records are pushed", .timeLimit(.minutes(1)))
struct InMemoryPushedInstancesTests {
    @Test("alpha's instance is pushed once bravo's connection subscribed and got its record, and no longer once alpha is gone; the changes say so in order")
    func pushedWhileSubscribed() async throws {
        let hosts = InMemoryContinueTests.Hosts(alphaAddresses: [PeerAddress(host: "10.0.0.1", port: 7000)])
        let bravo = hosts.bravo.agent
        let liveness = LivenessService(agent: bravo, connector: hosts.bravo.transport, clock: hosts.bravo.clock,
                                       timing: InMemoryAddressedPeerTests.timing, logger: quietLogger)
        try await hosts.run { editorApp in
            try await withThrowingTaskGroup(of: Void.self) { group in
                _ = try await hosts.publishNote(editorApp)  // bravo resolves alpha over "DNS-SD"
                #expect(bravo.pushedInstances.current.isEmpty, "nothing pushed before liveness connects")
                var changes = bravo.pushedInstances.changes.makeAsyncIterator()
                group.addTask { try await liveness.run() }
                defer { group.cancelAll() }
                let alpha = try #require(await bravo.peers().first?.instanceName)
                #expect(try await InMemoryAddressedPeerTests.tick(hosts.bravo) { bravo.pushedInstances.current == [alpha] })
                #expect(await changes.next() == [alpha])

                hosts.alpha.transport.network.takeDown(host: hosts.alpha.listener.host, port: hosts.alpha.listener.port)
                #expect(try await InMemoryAddressedPeerTests.tick(hosts.bravo) { bravo.pushedInstances.current.isEmpty })
                #expect(await changes.next() == [])
            }
        }
    }
}

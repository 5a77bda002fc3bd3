import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import HandoffTransport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// Issue 21: a change of route to a paired device (a new address or port, or between DNS-SD and
/// its stored addresses) keeps a working liveness connection; only one that fails or says nothing
/// once pinged is replaced (docs/PROTOCOL.md, "Liveness"). Whole agents in memory, bravo's
/// liveness on its manual clock.
@Suite("Whole agents in memory: a change of route keeps a working liveness connection", .timeLimit(.minutes(1)))
struct InMemoryRouteChangeTests {
    typealias Hosts = InMemoryContinueTests.Hosts

    /// Steps both clocks `ticks` liveness ticks; returns for how many of them bravo listed alpha
    /// unreachable.
    static func unreachableTicks(_ hosts: Hosts, ticks: Int) async throws -> Int {
        var unreachable = 0
        for _ in 0..<ticks {
            try await InMemoryLivenessLinkTests.step(hosts)
            if await hosts.bravo.agent.peers().first?.reachable == false { unreachable += 1 }
        }
        return unreachable
    }

    @Test("DNS-SD resolves alpha at a new address while its connection answers: the connection stays, nothing is dialled there, alpha stays reachable, and a continue goes on it")
    func newAddressKeepsTheConnection() async throws {
        let hosts = Hosts()
        let dials = OpenedConnections(hosts.bravo.transport)
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts, connector: dials) { editorApp in
            let bravo = hosts.bravo.agent
            let note = try await hosts.publishNote(editorApp)
            #expect(try await InMemoryPushedAdvertisementTests.subscribed(hosts))
            #expect(try await InMemoryLivenessLinkTests.tick(hosts) { bravo.fetchPool.links?.count() == 1 })
            let accepted = hosts.alpha.listener.acceptedCount
            let dialled = dials.endpoints
            var moved = InMemoryHost.service(of: hosts.alpha, txtRecord: await hosts.alpha.agent.advertisedTXTRecord)
            moved.addresses = ["10.0.0.9"]
            await bravo.handle(.resolved(moved))
            #expect(await bravo.livenessTargets().values.first?.endpoints.map(\.host) == ["10.0.0.9"])
            #expect(try await Self.unreachableTicks(hosts, ticks: 40) == 0)
            #expect(dials.endpoints == dialled, "nothing dialled for the move: \(dials.endpoints.map(\.host))")
            #expect(hosts.alpha.listener.acceptedCount == accepted, "no reconnect for a new address")
            #expect(hosts.alpha.agent.advertisementFeed.subscriberCount == 1, "the subscription kept")
            #expect(try await bravo.continueActivity(id: note.identifier).get().by == "app")
            #expect(hosts.alpha.listener.acceptedCount == accepted, "the continue went on the kept connection")
        }
    }

    @Test("an old peer (no pushes) that DNS-SD stops showing, with a stored address: its open connection stays and subscribes, and alpha's next note is pushed on it")
    func oldPeerSubscribesOnTheKeptConnection() async throws {
        let hosts = Hosts(alphaAddresses: [PeerAddress(host: "10.0.0.1", port: 7000)], bravoMultiplexes: false)
        let bravo = hosts.bravo.agent
        try await hosts.run { editorApp in
            _ = try await hosts.publishNote(editorApp)  // DNS-SD shows alpha before liveness starts
            let liveness = LivenessService(agent: bravo, connector: hosts.bravo.transport, clock: hosts.bravo.clock,
                                           timing: InMemoryAddressedPeerTests.timing, logger: quietLogger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await liveness.run() }
                defer { group.cancelAll() }
                let alpha = hosts.alpha.identity.deviceID
                // Greeted: bravo's first connection carries its announce, which lists it on alpha.
                #expect(try await InMemoryLivenessLinkTests.tick(hosts) { await hosts.alpha.agent.peers().count == 1 }, "liveness connected")
                for _ in 0..<5 { try await InMemoryLivenessLinkTests.step(hosts) }
                #expect(hosts.alpha.agent.advertisementFeed.subscriberCount == 0, "not subscribed while DNS-SD shows it (as before)")
                // The goodbye is honoured only for a device found unreachable (said here, as
                // liveness would a moment before its connection closes).
                await bravo.setReachability(alpha, reachable: false, lastHeard: nil)
                await bravo.handle(.removed(instanceName: hosts.alpha.agent.instanceName))
                #expect(try await InMemoryLivenessLinkTests.tick(hosts) { await bravo.peers().map(\.via) == ["address"] })
                #expect(hosts.alpha.agent.advertisementFeed.subscriberCount == 1, "subscribed on the open connection")
                #expect(hosts.alpha.listener.acceptedCount == 1, "no reconnect for the change of route")
                await bravo.setReachability(alpha, reachable: true, lastHeard: nil)
                let next = try await InMemoryPushedAdvertisementTests.note("Packing list", editorApp)
                #expect(await eventually { await bravo.offered().map(\.id) == [next.identifier] }, "pushed on the connection kept")
                #expect(hosts.alpha.listener.acceptedCount == 1)
            }
        }
    }
}

import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import HandoffTransport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// A paired device that DNS-SD never shows, known by its stored address: bravo's liveness reaches
/// alpha there, subscribes to its advertisement, and everything else works as with DNS-SD. In
/// memory, on bravo's manual clock.
@Suite("Whole agents in memory: a paired device known by address", .timeLimit(.minutes(1)))
struct InMemoryAddressedPeerTests {
    static let timing = PeerLiveness<DeviceID, ManualClock.Instant>.Timing(interval: .seconds(1), timeout: .seconds(2))

    /// Runs bravo's liveness beside `body`, moving bravo's clock on a tick at a time until
    /// `condition` holds (at most `ticks` ticks); returns whether it held.
    static func tick(_ host: InMemoryHost, until condition: () async -> Bool, ticks: Int = 200) async throws -> Bool {
        for _ in 0..<ticks {
            if await condition() { return true }
            try await host.clock.waitForSleepers(count: 1)
            host.clock.advance(by: timing.tickInterval)
            for _ in 0..<50 { await Task.yield() }
        }
        return await condition()
    }

    /// Runs both agents with their apps and bravo's liveness (through `connector`; bravo's
    /// transport when nil), then `body`.
    static func runWithLiveness(_ hosts: InMemoryContinueTests.Hosts, connector: (any PeerConnector)? = nil,
                                _ body: @escaping @Sendable (_ editorApp: HandoffApplication) async throws -> Void) async throws {
        let liveness = LivenessService(agent: hosts.bravo.agent, connector: connector ?? hosts.bravo.transport, clock: hosts.bravo.clock,
                                       timing: timing, logger: quietLogger)
        try await hosts.run { editorApp in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await liveness.run() }
                defer { group.cancelAll() }
                try await body(editorApp)
            }
        }
    }

    @Test("bravo learns alpha's note from the subscription at alpha's address, sees each new one, and continues it to its viewer")
    func listAndContinueByAddress() async throws {
        let hosts = InMemoryContinueTests.Hosts(alphaAddresses: [PeerAddress(host: "10.0.0.1", port: 7000)])
        try await Self.runWithLiveness(hosts) { editorApp in
            let note = try await hosts.publishNote(editorApp, discover: false)
            let bravo = hosts.bravo.agent
            #expect(try await Self.tick(hosts.bravo) { await bravo.offered().map(\.id) == [note.identifier] })
            let peers = await bravo.peers()
            #expect(peers.map(\.via) == ["address"], "\(peers)")
            #expect(peers.first?.addresses == ["10.0.0.1"])
            #expect(peers.first?.port == 7000)
            #expect(hosts.alpha.agent.advertisementFeed.subscriberCount == 1)

            // A new note on alpha is pushed: no DNS-SD, no polling.
            let second = UserActivity(activityType: NotesApp.type, application: editorApp)
            second.title = "Packing list"
            try await second.becomeCurrent()
            #expect(await eventually { await bravo.offered().map(\.id) == [second.identifier] })

            let result = try await bravo.continueActivity(id: second.identifier).get()
            #expect(result.by == "app")
            #expect(result.peer == "alpha")
            #expect(await eventually { hosts.viewer.events.contains(.didUpdate) })
        }
    }

    @Test("DNS-SD stays the way to a device it shows: subscribed for its news only (its hello says it pushes), and a record pushed meanwhile does not take its place")
    func dnsSDFirst() async throws {
        let hosts = InMemoryContinueTests.Hosts(alphaAddresses: [PeerAddress(host: "10.0.0.1", port: 7000)])
        let liveness = LivenessService(agent: hosts.bravo.agent, connector: hosts.bravo.transport, clock: hosts.bravo.clock,
                                       timing: Self.timing, logger: quietLogger)
        try await hosts.run { editorApp in
            try await withThrowingTaskGroup(of: Void.self) { group in
                let note = try await hosts.publishNote(editorApp)  // bravo resolves alpha over "DNS-SD"
                group.addTask { try await liveness.run() }
                defer { group.cancelAll() }
                let bravo = hosts.bravo.agent
                #expect(try await Self.tick(hosts.bravo) { await bravo.livenessTargets().values.map(\.subscribes) == [false] })
                #expect(try await Self.tick(hosts.bravo, until: { false }, ticks: 5) == false)
                // Issue 21: every liveness connection to a peer that pushes subscribes (an old peer's
                // is not subscribed to: InMemoryPushedAdvertisementTests.oldPeerNotSubscribed).
                #expect(hosts.alpha.agent.advertisementFeed.subscriberCount == 1)
                #expect(await bravo.peers().map(\.via) == ["dns-sd"])
                #expect(await bravo.offered().map(\.id) == [note.identifier])

                // A push arriving (say, from a subscription made just before DNS-SD found alpha)
                // brings the news but keeps DNS-SD's address.
                let record = hosts.alpha.agent.advertisementFeed
                var records = record.subscribe().makeAsyncIterator()
                let current = try #require(await records.next())
                await bravo.receivedPushedAdvertisement(instanceName: current.instanceName, txtRecord: current.txtRecord,
                                                        from: hosts.alpha.identity.deviceID, at: PeerEndpoint(host: "192.0.2.9", port: 9))
                #expect(await bravo.peers().map(\.via) == ["dns-sd"])
                #expect(await bravo.peers().first?.addresses == ["10.0.0.1"])
            }
        }
    }

    @Test("of two stored addresses, the first answers nothing: liveness moves on to the second and alpha's note is offered")
    func secondAddress() async throws {
        let hosts = InMemoryContinueTests.Hosts(alphaAddresses: [PeerAddress(host: "10.0.0.9", port: 7000), PeerAddress(host: "10.0.0.1", port: 7000)])
        try await Self.runWithLiveness(hosts) { editorApp in
            let note = try await hosts.publishNote(editorApp, discover: false)
            let bravo = hosts.bravo.agent
            #expect(try await Self.tick(hosts.bravo) { await bravo.offered().map(\.id) == [note.identifier] })
            #expect(await bravo.peers().first?.addresses == ["10.0.0.1"])
        }
    }
}

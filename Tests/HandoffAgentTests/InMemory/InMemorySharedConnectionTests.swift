import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// Issue 21: one connection per pair of devices that both watch each other (docs/PROTOCOL.md,
/// "One connection per pair"). Whole agents in memory, both running liveness on their manual
/// clocks: alpha's and bravo's dials cross at the start, and they settle on one connection,
/// which carries both sides' pings, subscriptions and fetches.
@Suite("Whole agents in memory: one connection per pair of devices", .timeLimit(.minutes(1)))
struct InMemorySharedConnectionTests {
    typealias Hosts = InMemoryContinueTests.Hosts
    static let timing = InMemoryAddressedPeerTests.timing

    /// Runs both agents, each having found the other, with both liveness services (each through
    /// its own transport, or the connector given), then `body`.
    static func runBoth(_ hosts: Hosts, alphaConnector: (any PeerConnector)? = nil,
                        _ body: @escaping @Sendable (_ editorApp: HandoffApplication) async throws -> Void) async throws {
        let alpha = LivenessService(agent: hosts.alpha.agent, connector: alphaConnector ?? hosts.alpha.transport, clock: hosts.alpha.clock,
                                    timing: timing, logger: quietLogger)
        let bravo = LivenessService(agent: hosts.bravo.agent, connector: hosts.bravo.transport, clock: hosts.bravo.clock,
                                    timing: timing, logger: quietLogger)
        try await hosts.run { editorApp in
            await hosts.bravo.discover(hosts.alpha)
            await hosts.alpha.discover(hosts.bravo)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await alpha.run() }
                group.addTask { try await bravo.run() }
                defer { group.cancelAll() }
                try await body(editorApp)
            }
        }
    }

    /// Moves both clocks a liveness tick.
    static func step(_ hosts: Hosts) async throws {
        try await hosts.alpha.clock.waitForSleepers(count: 1)
        try await hosts.bravo.clock.waitForSleepers(count: 1)
        hosts.alpha.clock.advance(by: timing.tickInterval)
        hosts.bravo.clock.advance(by: timing.tickInterval)
        for _ in 0..<50 { await Task.yield() }
    }

    /// Steps until `condition` holds (at most `ticks`); returns whether it held.
    static func tick(_ hosts: Hosts, ticks: Int = 200, until condition: () async -> Bool) async throws -> Bool {
        for _ in 0..<ticks {
            if await condition() { return true }
            try await step(hosts)
        }
        return await condition()
    }

    /// The connections open between them, whoever dialled.
    static func open(_ hosts: Hosts) -> Int { hosts.alpha.listener.openCount + hosts.bravo.listener.openCount }

    /// Settled: one connection open, each side's fetches on it, each lists the other reachable.
    static func settled(_ hosts: Hosts) async -> Bool {
        guard open(hosts) == 1, hosts.alpha.agent.fetchPool.links?.count() == 1, hosts.bravo.agent.fetchPool.links?.count() == 1 else { return false }
        let peers = await hosts.alpha.agent.peers() + hosts.bravo.agent.peers()
        return peers.count == 2 && peers.allSatisfy(\.reachable)
    }

    /// A note published on alpha (bravo has found alpha) and an activity on bravo, then steps
    /// until the two have settled on one connection; returns both activities' IDs.
    static func publishBothAndSettle(_ hosts: Hosts, _ editorApp: HandoffApplication, bravoSample: Int) async throws -> (note: UUID, onBravo: UUID) {
        let note = try await hosts.publishNote(editorApp)
        let onBravo = try await hosts.bravo.agent.publish(Sample.activity(bravoSample, title: "On bravo"))
        #expect(try await tick(hosts) { await settled(hosts) }, "open \(open(hosts))")
        return (note.identifier, onBravo)
    }

    /// `on` fetches `id` from `from`.
    static func fetch(_ id: UUID, on host: InMemoryHost, from other: InMemoryHost) async -> Result<FetchedActivity, HandoffError> {
        await host.agent.client.fetchActivity(FetchRequest(activityID: id, continuationID: UUID()), from: other.listener.endpoint, peerName: other.name)
    }

    /// The host whose device ID is the lower: its dial wins when the two cross.
    static func lower(_ hosts: Hosts) -> (lower: InMemoryHost, higher: InMemoryHost) {
        SharedConnectionRule.dialWins(of: hosts.alpha.identity.deviceID.bytes, over: hosts.bravo.identity.deviceID.bytes)
            ? (hosts.alpha, hosts.bravo) : (hosts.bravo, hosts.alpha)
    }

    @Test("both watch each other: their dials cross and they keep one, the lower device ID's; fetches and continues go both ways on it, with no new connection")
    func crossingDialsSettleOnOne() async throws {
        let hosts = Hosts()
        try await Self.runBoth(hosts) { editorApp in
            let (note, onBravo) = try await Self.publishBothAndSettle(hosts, editorApp, bravoSample: 1)
            let (lower, higher) = Self.lower(hosts)
            #expect(higher.listener.openCount == 1, "the connection the lower device ID dialled")
            #expect(lower.listener.openCount == 0, "the higher's own dial closed")
            let accepted = hosts.alpha.listener.acceptedCount + hosts.bravo.listener.acceptedCount
            for _ in 0..<3 {
                #expect(try await Self.fetch(note, on: hosts.bravo, from: hosts.alpha).get().activity.title == "Shopping list")
                #expect(try await Self.fetch(onBravo, on: hosts.alpha, from: hosts.bravo).get().activity.title == "On bravo")
            }
            #expect(try await hosts.bravo.agent.continueActivity(id: note).get().by == "app")
            #expect(await eventually { hosts.editor.events.contains(.wasContinued) }, "the continued notice crossed too")
            #expect(hosts.alpha.listener.acceptedCount + hosts.bravo.listener.acceptedCount == accepted, "no handshake for any of them")
            for _ in 0..<40 { try await Self.step(hosts) }
            #expect(await Self.settled(hosts), "still one, each side's pings answered on it")
            #expect(Self.open(hosts) == 1)
        }
    }

    @Test("a new note on either side is pushed on the one connection: each side subscribed on it")
    func pushesBothWays() async throws {
        let hosts = Hosts()
        try await Self.runBoth(hosts) { editorApp in
            _ = try await hosts.publishNote(editorApp)
            #expect(try await Self.tick(hosts) { await Self.settled(hosts) })
            #expect(hosts.alpha.agent.advertisementFeed.subscriberCount == 1)
            #expect(hosts.bravo.agent.advertisementFeed.subscriberCount == 1)
            let onBravo = try await hosts.bravo.agent.publish(Sample.activity(2, title: "Pushed from bravo"))
            #expect(await eventually { await hosts.alpha.agent.offered().map(\.id).contains(onBravo) }, "bravo's push reached alpha")
            let next = try await InMemoryPushedAdvertisementTests.note("Packing list", editorApp)
            #expect(await eventually { await hosts.bravo.agent.offered().map(\.id).contains(next.identifier) }, "alpha's push reached bravo")
            #expect(Self.open(hosts) == 1)
        }
    }

    @Test("one side cannot reach the other (its dials fail): both use the connection the other dialled, and fetch both ways on it")
    func oneWayReachability() async throws {
        let hosts = Hosts()
        try await Self.runBoth(hosts, alphaConnector: Unreachable()) { editorApp in
            let (note, onBravo) = try await Self.publishBothAndSettle(hosts, editorApp, bravoSample: 3)
            #expect(hosts.alpha.listener.openCount == 1, "bravo's dial, the only one")
            #expect(try await Self.fetch(onBravo, on: hosts.alpha, from: hosts.bravo).get().activity.title == "On bravo")
            #expect(try await Self.fetch(note, on: hosts.bravo, from: hosts.alpha).get().activity.title == "Shopping list")
            for _ in 0..<40 { try await Self.step(hosts) }
            #expect(await Self.settled(hosts), "alpha lists bravo reachable, though it cannot dial it")
        }
    }

    @Test("the connection breaks: they settle on one again, and fetch both ways on it")
    func dropThenOneAgain() async throws {
        let hosts = Hosts()
        try await Self.runBoth(hosts) { editorApp in
            let (note, onBravo) = try await Self.publishBothAndSettle(hosts, editorApp, bravoSample: 4)
            hosts.alpha.listener.breakConnections()
            hosts.bravo.listener.breakConnections()
            #expect(try await Self.tick(hosts) { Self.open(hosts) == 0 || hosts.alpha.agent.fetchPool.links?.count() != 1 })
            #expect(try await Self.tick(hosts) { await Self.settled(hosts) }, "open \(Self.open(hosts))")
            #expect(try await Self.fetch(note, on: hosts.bravo, from: hosts.alpha).get().activity.title == "Shopping list")
            #expect(try await Self.fetch(onBravo, on: hosts.alpha, from: hosts.bravo).get().activity.title == "On bravo")
        }
    }

    @Test("the side that adopted the connection fetches 20 at once, each answered 2.5 s late: each side lists the other reachable all along, every fetch delivers, on the one connection")
    func slowBurstOnTheAdoptedConnection() async throws {
        let hosts = Hosts(alpha: { $0.limits.fetchTimeout = .seconds(20) }, bravo: { $0.limits.fetchTimeout = .seconds(20) })
        try await Self.runBoth(hosts) { editorApp in
            let (note, onBravo) = try await Self.publishBothAndSettle(hosts, editorApp, bravoSample: 5)
            // The higher device ID adopted the lower's dial: it asks, the lower answers late.
            let (source, asker) = Self.lower(hosts)
            let id = source === hosts.alpha ? note : onBravo
            _ = try await source.agent.changeFaults(set: .object(["payloadDelayMs": .integer(2500)]), clear: nil).get()
            let results = Collected<Result<FetchedActivity, HandoffError>>()
            var unreachable = 0
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { results.append(await Self.fetch(id, on: asker, from: source)) } }
                var ticks = 0
                while results.count < 20, ticks < 400 {
                    try await Self.step(hosts)
                    ticks += 1
                    if await !(asker.agent.peers().first?.reachable ?? false) { unreachable += 1 }
                    if await !(source.agent.peers().first?.reachable ?? false) { unreachable += 1 }
                }
                try await group.waitForAll()
            }
            #expect(unreachable == 0, "a peer shown unreachable while it answered")
            #expect(results.all.allSatisfy { (try? $0.get()) != nil }, "\(results.all.filter { (try? $0.get()) == nil })")
            #expect(Self.open(hosts) == 1)
        }
    }

    /// A connector whose every dial is refused: a host that cannot reach its peer.
    struct Unreachable: PeerConnector {
        func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
            throw PeerConnectError(.connectionRefused, reason: "unreachable from here (test)")
        }
    }
}

import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import HandoffTrust
import Synchronization
import Testing

@testable import HandoffAgent

/// One connection per pair of devices: bravo's liveness connection to alpha carries its fetches
/// and `continued` notices too (docs/PROTOCOL.md, "One connection per pair"). Whole agents in
/// memory, bravo's liveness on its manual clock; alpha's clock moves with it.
@Suite("Whole agents in memory: liveness and fetches on one connection", .timeLimit(.minutes(1)))
struct InMemoryLivenessLinkTests {
    static let timing = InMemoryAddressedPeerTests.timing

    /// Moves both clocks on a liveness tick at a time until `condition` holds (at most `ticks`);
    /// returns whether it held.
    static func tick(_ hosts: InMemoryContinueTests.Hosts, ticks: Int = 200, until condition: () async -> Bool) async throws -> Bool {
        for _ in 0..<ticks {
            if await condition() { return true }
            try await step(hosts)
        }
        return await condition()
    }

    static func step(_ hosts: InMemoryContinueTests.Hosts) async throws {
        try await hosts.bravo.clock.waitForSleepers(count: 1)
        hosts.bravo.clock.advance(by: timing.tickInterval)
        hosts.alpha.clock.advance(by: timing.tickInterval)
        for _ in 0..<50 { await Task.yield() }
    }

    static func fetch(_ hosts: InMemoryContinueTests.Hosts, _ id: UUID) async -> Result<FetchedActivity, HandoffError> {
        await hosts.bravo.agent.client.fetchActivity(FetchRequest(activityID: id, continuationID: UUID()), from: hosts.alpha.listener.endpoint,
                                                     peerName: "alpha")
    }

    @Test("bravo's liveness connection carries its continues: five continues open no connection to alpha")
    func continuesRideTheLivenessConnection() async throws {
        let hosts = InMemoryContinueTests.Hosts()
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { editorApp in
            let note = try await hosts.publishNote(editorApp)
            let pool = hosts.bravo.agent.fetchPool
            #expect(try await Self.tick(hosts) { pool.links?.count() == 1 }, "the liveness connection, shared")
            let accepted = hosts.alpha.listener.acceptedCount
            #expect(accepted == 1, "the liveness connection alone")
            for _ in 0..<5 {
                #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
            }
            #expect(hosts.alpha.listener.acceptedCount == accepted, "no new connection: no handshake for any continue")
            #expect(pool.idleCount() == 1, "the one connection, nothing else kept")
            #expect(await eventually { hosts.editor.events.filter { $0 == .wasContinued }.count == 5 }, "\(hosts.editor.events)")
        }
    }

    @Test("100 concurrent fetches, each answered 3 s late: alpha stays reachable all along, and every fetch delivers on the one connection")
    func burstKeepsPeerReachable() async throws {
        let hosts = InMemoryContinueTests.Hosts(bravo: { $0.limits.fetchTimeout = .seconds(20) })
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { editorApp in
            let note = try await hosts.publishNote(editorApp)
            let bravo = hosts.bravo.agent
            #expect(try await Self.tick(hosts) { bravo.fetchPool.links?.count() == 1 })
            let accepted = hosts.alpha.listener.acceptedCount
            let id = note.identifier
            _ = try await hosts.alpha.agent.changeFaults(set: .object(["payloadDelayMs": .integer(3000)]), clear: nil).get()
            let results = Collected<Result<FetchedActivity, HandoffError>>()
            var unreachable = 0
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let result = await Self.fetch(hosts, id)
                        results.append(result)
                    }
                }
                // Two batches of 3 s (64 at once, then the rest), with pings every second between.
                var ticks = 0
                while results.count < 100, ticks < 400 {
                    try await Self.step(hosts)
                    if await bravo.peers().first?.reachable == false { unreachable += 1 }
                    ticks += 1
                }
            }
            #expect(unreachable == 0, "alpha was shown unreachable for \(unreachable) ticks while it answered")
            let all = results.all
            #expect(all.count == 100)
            #expect(all.allSatisfy { (try? $0.get())?.activity.id == note.identifier }, "\(all.filter { (try? $0.get()) == nil }.prefix(3))")
            #expect(hosts.alpha.listener.acceptedCount == accepted, "every fetch went on the liveness connection")
        }
    }

    @Test("the liveness connection drops with a fetch in flight: the fetch is made once more on a connection of its own, and delivers")
    func dropMidFetchRetriesOnce() async throws {
        let hosts = InMemoryContinueTests.Hosts()
        let probes = OpenedConnections(hosts.bravo.transport)
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts, connector: probes) { editorApp in
            let note = try await hosts.publishNote(editorApp)
            let links = try #require(hosts.bravo.agent.fetchPool.links)
            #expect(try await Self.tick(hosts) { links.count() == 1 })
            let accepted = hosts.alpha.listener.acceptedCount
            _ = try await hosts.alpha.agent.changeFaults(set: .object(["payloadDelayMs": .integer(1000)]), clear: nil).get()
            let endpoint = hosts.alpha.listener.endpoint
            let id = note.identifier
            let result = Collected<Result<FetchedActivity, HandoffError>>()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    let fetched = await Self.fetch(hosts, id)
                    result.append(fetched)
                }
                #expect(await eventually { links.openConnection(to: endpoint)?.inFlight == 1 })
                await probes.last?.close()
                let answered = try await Self.tick(hosts) { result.count == 1 }
                #expect(answered)
            }
            let fetched = try #require(result.all.first)
            #expect(try fetched.get().activity.id == note.identifier)
            #expect(hosts.alpha.listener.acceptedCount >= accepted + 1, "the retry's own connection (and liveness's next)")
        }
    }

    @Test("an old peer, whose hello does not agree on multiplexing: liveness shares nothing, and continues go a connection each, as before")
    func oldPeerServedAsBefore() async throws {
        let hosts = InMemoryContinueTests.Hosts(bravoMultiplexes: false)
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { editorApp in
            let note = try await hosts.publishNote(editorApp)
            let pool = hosts.bravo.agent.fetchPool
            #expect(try await Self.tick(hosts) { hosts.alpha.listener.acceptedCount == 1 }, "liveness connected")
            for _ in 0..<3 { try await Self.step(hosts) }
            #expect(pool.links?.count() == 0)
            for _ in 0..<3 {
                #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
            }
            #expect(pool.links?.count() == 0, "no multiplexed connection to an old peer")
            #expect(pool.idleCount() >= 1, "its fetch connection kept for the next, as before")
            #expect(await hosts.bravo.agent.peers().first?.reachable == true)
        }
    }
}

/// Liveness connections through `base`, kept so that a test can cut one, with every endpoint
/// dialled, answered or not.
final class OpenedConnections: PeerConnector {
    let base: any PeerConnector
    private let opened = Mutex<[any FrameConnection]>([])
    private let dialled = Mutex<[PeerEndpoint]>([])

    init(_ base: any PeerConnector) { self.base = base }

    /// The connection opened last.
    var last: (any FrameConnection)? { opened.withLock { $0.last } }

    /// The endpoints dialled so far, in order.
    var endpoints: [PeerEndpoint] { dialled.withLock { $0 } }

    func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        dialled.withLock { $0.append(endpoint) }
        let connection = try await base.connect(to: endpoint, limits: limits)
        opened.withLock { $0.append(connection) }
        return connection
    }
}

/// Values that concurrent tasks hand in.
final class Collected<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock(\.count) }
}

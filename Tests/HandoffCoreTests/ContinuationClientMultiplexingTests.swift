import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ContinuationClient` with a multiplexing pool over the in-memory transport: fetches share one
/// connection to a source that multiplexes, a source that does not is fetched from as before, and
/// a shared connection that drops sends the fetch once more on a fresh one. Deadlines on a
/// `ManualClock` that never moves: nothing here waits for time.
@Suite("ContinuationClient: fetches multiplexed on one connection per peer")
struct ContinuationClientMultiplexingTests {
    static let multiplexingSource = PeerHello(agentID: "source-agent-id", name: "Source", multiplexing: true)

    static func client(_ connector: InMemoryConnector, clock: ManualClock) -> (ContinuationClient<ManualClock>, IdleConnectionPool<ManualClock>) {
        let pool = IdleConnectionPool(policy: .init(multiplexing: true), clock: clock, background: .tasks)
        return (ContinuationClient(connector: connector, clock: clock, hello: Fixtures.hello(), limits: FrameLimits(),
                                   timeouts: ContinuationClientTests.timeouts, pool: pool), pool)
    }

    @Test("concurrent fetches and their continued notices share one connection, opened once")
    func concurrentFetchesShareOneConnection() async throws {
        let activity = ContinuationClientTests.activity()
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([activity]), hello: Self.multiplexingSource))
        let (client, pool) = Self.client(connector, clock: ManualClock())
        let results = await withTaskGroup(of: Result<Activity, HandoffError>.self) { group in
            for _ in 0..<20 { group.addTask { await ContinuationClientTests.fetch(client) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 20)
        for result in results { #expect(try result.get().userInfo == activity.userInfo) }
        #expect(await client.notifyContinued(Fixtures.request, at: ContinuationClientTests.endpoint) == nil)
        #expect(connector.connections.count == 1)
        #expect(pool.idleCount() == 1)
        let connection = try #require(connector.connections.first)
        let sent = connection.framesFromClient.map(\.kind)
        #expect(sent.first == .hello)
        #expect(sent.filter { $0 == .request }.count == 20)
        #expect(sent.last == .continued)
        #expect(connection.framesFromSource.dropFirst().allSatisfy { $0.kind == .reply })
    }

    @Test("a source that does not multiplex is fetched from one fetch at a time, on the connection kept in the pool")
    func plainSource() async throws {
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([ContinuationClientTests.activity()])))
        let (client, pool) = Self.client(connector, clock: ManualClock())
        _ = try await ContinuationClientTests.fetch(client).get()
        _ = try await ContinuationClientTests.fetch(client).get()
        #expect(connector.connections.count == 1)
        #expect(pool.idleCount() == 1)
        #expect(pool.links?.count() == 0)
        #expect(!connector.connections[0].framesFromClient.contains { $0.kind == .request })
    }

    @Test("the shared connection dropped: the next fetch goes on a fresh connection and succeeds")
    func droppedConnection() async throws {
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([ContinuationClientTests.activity()]), hello: Self.multiplexingSource))
        let (client, pool) = Self.client(connector, clock: ManualClock())
        _ = try await ContinuationClientTests.fetch(client).get()
        connector.connections[0].closeFromSource()
        _ = try await ContinuationClientTests.fetch(client).get()
        #expect(connector.connections.count == 2)
        #expect(pool.idleCount() <= 2)
    }

    @Test("the shared connection drops with fetches in flight: each is made once more on a connection of its own, and succeeds")
    func dropWithFetchesInFlight() async throws {
        let activity = ContinuationClientTests.activity()
        let table = InMemoryActivityTable([activity])
        var holding = InMemorySource.agent(table, hello: Self.multiplexingSource)
        holding.holdBackAfterFrames = 1  // the hello goes out; every answer is held back
        let connector = InMemoryConnector(source: holding)
        let (client, _) = Self.client(connector, clock: ManualClock())
        try await withThrowingTaskGroup(of: Activity.self) { group in
            for _ in 0..<5 { group.addTask { try await ContinuationClientTests.fetch(client).get() } }
            while connector.connections.first.map({ $0.framesFromClient.filter { $0.kind == .request }.count }) != 5 { await Task.yield() }
            connector.setBehavior(.source(.agent(table, hello: Self.multiplexingSource)))
            connector.connections[0].closeFromSource()
            for try await fetched in group { #expect(fetched.userInfo == activity.userInfo) }
        }
        #expect(connector.connections.count == 6, "the shared one, then one for each fetch it left unanswered")
    }

    @Test("a source that refuses the device: every waiting fetch fails with its code, as on a connection of its own")
    func refusedOpening() async throws {
        let refusal = PeerMessage.error(code: HandoffError.Code.userActivityConnectionUnavailable.rawValue, message: "not paired").frame
        let connector = InMemoryConnector(source: .frames([refusal], thenClose: true))
        let (client, pool) = Self.client(connector, clock: ManualClock())
        let error = try #require(ContinuationClientTests.failure(await ContinuationClientTests.fetch(client)))
        #expect(error.code == .userActivityConnectionUnavailable)
        #expect(error.message == "not paired")
        #expect(pool.idleCount() == 0)
    }
}

import HandoffCore
import HandoffTestSupport
import Synchronization
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `IdleConnectionPool` and `ContinuationClient` with a pool: connections kept between fetches,
/// stale ones found out and replaced, bounds by count and by age on a `ManualClock`.
@Suite("IdleConnectionPool: reusing connections between continuations")
struct IdleConnectionPoolTests {
    static let endpoint = ContinuationClientTests.endpoint
    static let other = PeerEndpoint(host: "192.0.2.11", port: 7_654, expectedIdentity: Array(repeating: 7, count: 32))

    /// A closer that records what the pool let go, so tests see it at once.
    final class Closed: Sendable {
        private let connections = Mutex<[any FrameConnection]>([])
        var count: Int { connections.withLock { $0.count } }
        func contains(_ connection: InMemoryFrameConnection) -> Bool {
            connections.withLock { $0.contains { ($0 as? InMemoryFrameConnection) === connection } }
        }
        func record(_ closing: [any FrameConnection]) { connections.withLock { $0 += closing } }
    }

    static func pool(clock: ManualClock, closed: Closed = Closed(), maxIdle: Int = 2) -> IdleConnectionPool<ManualClock> {
        IdleConnectionPool(policy: .init(maxIdlePerPeer: maxIdle, idleTimeout: .seconds(30)), clock: clock, background: .tasks) { closed.record($0) }
    }

    static func client(_ connector: InMemoryConnector, clock: ManualClock, pool: IdleConnectionPool<ManualClock>) -> ContinuationClient<ManualClock> {
        ContinuationClient(connector: connector, clock: clock, hello: Fixtures.hello(), limits: FrameLimits(),
                           timeouts: ContinuationClientTests.timeouts, pool: pool)
    }

    static func connection(_ source: InMemorySource = .agent(InMemoryActivityTable())) -> InMemoryFrameConnection {
        InMemoryFrameConnection(endpoint: endpoint, limits: FrameLimits(), source: source)
    }

    // MARK: Reuse

    @Test("a second fetch reuses the connection: the fetch alone, no connect, no hello")
    func reuse() async throws {
        let clock = ManualClock()
        let pool = Self.pool(clock: clock)
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([ContinuationClientTests.activity()])))
        let client = Self.client(connector, clock: clock, pool: pool)

        _ = try await ContinuationClientTests.fetch(client).get()
        #expect(pool.idleCount(Self.endpoint) == 1)
        let second = try await ContinuationClientTests.fetch(client).get()
        #expect(second.userInfo == ContinuationClientTests.activity().userInfo)

        #expect(connector.attempts == [Self.endpoint])
        let connection = try #require(connector.connections.first)
        #expect(connection.framesFromClient.map(\.kind) == [.hello, .fetch, .fetch])
        #expect(!connection.isClosedByClient)
        #expect(pool.idleCount() == 1)
    }

    @Test("an idle connection the source closed is replaced by a fresh one: the fetch succeeds")
    func staleClosed() async throws {
        let clock = ManualClock()
        let pool = Self.pool(clock: clock)
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([ContinuationClientTests.activity()])))
        let client = Self.client(connector, clock: clock, pool: pool)

        _ = try await ContinuationClientTests.fetch(client).get()
        let first = try #require(connector.connections.first)
        first.closeFromSource()

        _ = try await ContinuationClientTests.fetch(client).get()
        #expect(connector.attempts.count == 2)
        #expect(first.isClosedByClient)
        #expect(connector.connections.last?.framesFromClient.map(\.kind) == [.hello, .fetch])
        #expect(pool.idleCount() == 1)
    }

    @Test("a reused connection that breaks after the source answered is a failure (4608), not retried")
    func brokenAfterAnswer() async throws {
        let clock = ManualClock()
        let pool = Self.pool(clock: clock)
        // hello, activity, userInfo for the first fetch; the activity frame of the second, then close.
        var source = InMemorySource.agent(InMemoryActivityTable([ContinuationClientTests.activity()]))
        source.closeAfterFrames = 4
        let connector = InMemoryConnector(source: source)
        let client = Self.client(connector, clock: clock, pool: pool)

        _ = try await ContinuationClientTests.fetch(client).get()
        let error = try #require(ContinuationClientTests.failure(await ContinuationClientTests.fetch(client)))
        #expect(error.code == .userActivityHandoffFailed)
        #expect(connector.attempts.count == 1, "a half-answered fetch is not made again")
        #expect(pool.idleCount() == 0)
    }

    @Test("a reused connection whose source stops answering is 4610 at the fetch deadline")
    func silentReused() async throws {
        let clock = ManualClock()
        let pool = Self.pool(clock: clock)
        var source = InMemorySource.agent(InMemoryActivityTable([ContinuationClientTests.activity()]))
        source.holdBackAfterFrames = 3
        let connector = InMemoryConnector(source: source)
        let client = Self.client(connector, clock: clock, pool: pool)

        _ = try await ContinuationClientTests.fetch(client).get()
        async let second = ContinuationClientTests.fetch(client)
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: ContinuationClientTests.timeouts.fetch)
        let error = try #require(ContinuationClientTests.failure(await second))
        #expect(error.code == .userActivityRemoteApplicationTimedOut)
        #expect(pool.idleCount() == 0)
    }

    @Test("a coded answer from the source (activity gone) closes the connection; the pool keeps only clean ones")
    func failureNotPooled() async throws {
        let clock = ManualClock()
        let pool = Self.pool(clock: clock)
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable()))
        let client = Self.client(connector, clock: clock, pool: pool)
        let error = try #require(ContinuationClientTests.failure(await ContinuationClientTests.fetch(client)))
        #expect(error.code == .userActivityHandoffFailed)
        #expect(pool.idleCount() == 0)
        #expect(connector.connections.first?.isClosedByClient == true)
    }

    // MARK: Telling the source

    @Test("`continued` goes on an idle connection when there is one, on a new one (then kept) when not")
    func notifyContinued() async throws {
        let clock = ManualClock()
        let pool = Self.pool(clock: clock)
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([ContinuationClientTests.activity()])))
        let client = Self.client(connector, clock: clock, pool: pool)

        #expect(await client.notifyContinued(Fixtures.request, at: Self.endpoint) == nil)
        #expect(connector.attempts.count == 1)
        #expect(connector.connections.first?.framesFromClient.map(\.kind) == [.hello, .continued])
        #expect(pool.idleCount(Self.endpoint) == 1, "kept after the source's hello")

        _ = try await ContinuationClientTests.fetch(client).get()
        #expect(await client.notifyContinued(Fixtures.request, at: Self.endpoint) == nil)
        #expect(connector.attempts.count == 1)
        #expect(connector.connections.first?.framesFromClient.map(\.kind) == [.hello, .continued, .fetch, .continued])
    }

    // MARK: Bounds

    @Test("at most maxIdlePerPeer idle connections per endpoint; the extra one is closed")
    func maxIdle() {
        let clock = ManualClock()
        let closed = Closed()
        let pool = Self.pool(clock: clock, closed: closed, maxIdle: 2)
        let connections = (0..<3).map { _ in Self.connection() }
        for connection in connections { pool.put(connection, for: Self.endpoint) }
        pool.put(Self.connection(), for: Self.other)
        #expect(pool.idleCount(Self.endpoint) == 2)
        #expect(pool.idleCount() == 3)
        #expect(closed.count == 1)
        #expect(closed.contains(connections[2]))
        // The most recently returned first.
        #expect((pool.take(Self.endpoint) as? InMemoryFrameConnection) === connections[1])
    }

    @Test("an idle connection older than idleTimeout is closed, not reused")
    func idleTimeout() {
        let clock = ManualClock()
        let closed = Closed()
        let pool = Self.pool(clock: clock, closed: closed)
        let old = Self.connection()
        pool.put(old, for: Self.endpoint)
        clock.advance(by: .seconds(20))
        let young = Self.connection()
        pool.put(young, for: Self.other)
        clock.advance(by: .seconds(10))
        #expect(pool.take(Self.endpoint) == nil)
        #expect(closed.contains(old))
        #expect(pool.idleCount(Self.other) == 1)
        clock.advance(by: .seconds(20))
        pool.prune()
        #expect(closed.contains(young))
        #expect(pool.idleCount() == 0)
    }

    @Test("discard closes the idle connections of the endpoints that match (a peer gone unreachable)")
    func discard() {
        let clock = ManualClock()
        let closed = Closed()
        let pool = Self.pool(clock: clock, closed: closed)
        let mine = Self.connection()
        let theirs = Self.connection()
        pool.put(mine, for: Self.endpoint)
        pool.put(theirs, for: Self.other)
        pool.discard { $0.expectedIdentity == Self.other.expectedIdentity }
        #expect(closed.contains(theirs))
        #expect(!closed.contains(mine))
        #expect(pool.idleCount() == 1)
        pool.discardAll()
        #expect(pool.idleCount() == 0)
        #expect(closed.count == 2)
    }
}

import Synchronization

/// Connections to peer agents kept open after a fetch, so that the next continuation from the
/// same peer skips the TCP connect, the TLS handshake and the hello: one round trip instead of
/// three. The source session serves any number of fetches on one connection.
///
/// Bounded twice: at most ``Policy/maxIdlePerPeer`` idle connections per endpoint (extra ones are
/// closed when returned), and none older than ``Policy/idleTimeout`` (closed on the next take,
/// put or ``prune(now:)``). A connection that broke while idle is found out by the caller, which
/// then retries on a fresh connection (``ContinuationClient``).
///
/// Closing may wait for a TLS close_notify from a silent peer, so the pool never closes inside a
/// caller's path: it hands the connections to close to ``closer``.
public final class IdleConnectionPool<C: Clock>: Sendable where C.Duration == Duration {
    /// How many connections the pool keeps, and for how long.
    public struct Policy: Sendable, Hashable {
        /// Idle connections kept per endpoint; the rest are closed when returned.
        public var maxIdlePerPeer: Int
        /// An idle connection older than this is closed instead of reused.
        public var idleTimeout: Duration

        /// Whether fetches go on one multiplexed connection per peer (``IdleConnectionPool/links``)
        /// where the peer takes them.
        public var multiplexing: Bool

        public init(maxIdlePerPeer: Int = 2, idleTimeout: Duration = .seconds(30), multiplexing: Bool = false) {
            self.maxIdlePerPeer = maxIdlePerPeer
            self.idleTimeout = idleTimeout
            self.multiplexing = multiplexing
        }
    }

    private struct WeakPool {
        weak var pool: IdleConnectionPool?
    }

    private struct Entry {
        var connection: any FrameConnection
        var since: C.Instant
    }

    public let policy: Policy
    private let clock: C
    private let closer: @Sendable ([any FrameConnection]) -> Void
    private let idle = Mutex<[PeerEndpoint: [Entry]]>([:])
    /// The one multiplexed connection kept to each peer that takes multiplexed requests, with
    /// ``Policy/multiplexing``; nil otherwise. It stays open while the peer does: the idle
    /// timeout is for the connections that serve one fetch at a time.
    public let links: MultiplexedLinks?

    /// - Parameters:
    ///   - background: where work that outlives its caller runs (closing connections, opening
    ///     and reading the multiplexed ones): the agent's `BackgroundWork`.
    ///   - closer: closes connections the pool lets go, off the caller's path. Without one, each
    ///     is closed in `background`.
    public init(policy: Policy = Policy(), clock: C, background: BackgroundSpawner,
                closer: (@Sendable ([any FrameConnection]) -> Void)? = nil) {
        let closer = closer ?? { connections in
            for connection in connections { background.spawn { await connection.close() } }
        }
        self.policy = policy
        self.clock = clock
        self.closer = closer
        // A peer that turns out not to multiplex leaves its connection here, for fetches one at a time.
        let plain = Mutex(WeakPool())
        self.links = policy.multiplexing ? MultiplexedLinks(background: background, keepPlain: { connection, endpoint in
            if let pool = plain.withLock({ $0.pool }) { pool.put(connection, for: endpoint) } else { closer([connection]) }
        }) : nil
        plain.withLock { $0.pool = self }
    }

    /// The most recently returned idle connection to `endpoint`, or nil. The caller owns it.
    public func take(_ endpoint: PeerEndpoint) -> (any FrameConnection)? {
        let now = clock.now
        let (taken, expired) = idle.withLock { idle -> ((any FrameConnection)?, [any FrameConnection]) in
            let expired = Self.removeExpired(&idle, now: now, timeout: policy.idleTimeout)
            guard var entries = idle[endpoint], let last = entries.popLast() else { return (nil, expired) }
            idle[endpoint] = entries.isEmpty ? nil : entries
            return (last.connection, expired)
        }
        if !expired.isEmpty { closer(expired) }
        return taken
    }

    /// Returns a connection that finished an exchange cleanly, ready for the next. Closed instead
    /// when `endpoint` already has ``Policy/maxIdlePerPeer`` idle connections.
    public func put(_ connection: any FrameConnection, for endpoint: PeerEndpoint) {
        let now = clock.now
        let toClose = idle.withLock { idle -> [any FrameConnection] in
            var toClose = Self.removeExpired(&idle, now: now, timeout: policy.idleTimeout)
            if idle[endpoint, default: []].count < policy.maxIdlePerPeer {
                idle[endpoint, default: []].append(Entry(connection: connection, since: now))
            } else {
                toClose.append(connection)
            }
            return toClose
        }
        if !toClose.isEmpty { closer(toClose) }
    }

    /// Closes the idle connections older than ``Policy/idleTimeout``.
    public func prune() {
        let now = clock.now
        let expired = idle.withLock { Self.removeExpired(&$0, now: now, timeout: policy.idleTimeout) }
        if !expired.isEmpty { closer(expired) }
    }

    /// Closes the idle connections, and the multiplexed ones, to the endpoints that match (a
    /// peer found unreachable, say).
    public func discard(where matches: (PeerEndpoint) -> Bool) {
        links?.discard(where: matches)
        let dropped = idle.withLock { idle -> [any FrameConnection] in
            let keys = idle.keys.filter(matches)
            return keys.flatMap { idle.removeValue(forKey: $0)?.map(\.connection) ?? [] }
        }
        if !dropped.isEmpty { closer(dropped) }
    }

    /// Closes every idle connection (the agent is stopping).
    public func discardAll() { discard { _ in true } }

    /// How many connections the pool keeps to `endpoint` (all endpoints when nil): the idle
    /// ones, and the open multiplexed one.
    public func idleCount(_ endpoint: PeerEndpoint? = nil) -> Int {
        let kept = idle.withLock { idle in
            if let endpoint { return idle[endpoint]?.count ?? 0 }
            return idle.values.reduce(0) { $0 + $1.count }
        }
        return kept + (links?.count(endpoint) ?? 0)
    }

    private static func removeExpired(_ idle: inout [PeerEndpoint: [Entry]], now: C.Instant, timeout: Duration) -> [any FrameConnection] {
        var expired: [any FrameConnection] = []
        for (endpoint, entries) in idle {
            let fresh = entries.filter { $0.since.duration(to: now) < timeout }
            guard fresh.count != entries.count else { continue }
            expired += entries.filter { $0.since.duration(to: now) >= timeout }.map(\.connection)
            idle[endpoint] = fresh.isEmpty ? nil : fresh
        }
        return expired
    }
}

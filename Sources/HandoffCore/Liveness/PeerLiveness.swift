/// Liveness of paired peers, faster than DNS-SD's record lifetimes: a pure state machine that
/// decides, for each peer, when to open a probe connection, when to ping on it and when the peer
/// is unreachable (docs/PROTOCOL.md, "Liveness").
///
/// A shell feeds it events (``established(_:attempt:now:)``, ``heard(_:attempt:now:)``,
/// ``lost(_:attempt:now:)``, ``resolved(_:now:endpointChanged:)``) and calls ``tick(now:)`` often
/// (every ``Timing/tickInterval``); each returns the ``Action``s to perform. The machine reads no
/// clock and does no I/O: time is the `Instant` the shell passes, so tests drive it with a manual
/// clock.
///
/// The rules, per peer:
/// - One connection at a time. While it is open, a `ping` goes every ``Timing/interval``; any
///   frame from the peer counts as heard.
/// - Nothing heard for ``Timing/timeout``: the peer is unreachable at once.
/// - The connection closes, or an attempt fails or takes longer than ``Timing/timeout``: a second
///   attempt is made at once; when it fails too (or the peer was not reachable yet after two
///   attempts), the peer is unreachable. A crashed agent's host refuses the connection, so this
///   takes milliseconds.
/// - While not connected, a new attempt every ``Timing/retryInterval``, so a peer that returns is
///   reachable again within about that time. A fresh DNS-SD resolve of the peer makes the next
///   probe (attempt or ping) immediate.
/// - A peer that moved (a new address or port, or another way to it) keeps a working connection:
///   it is pinged at once, and only when nothing is heard on it within ``Timing/retryInterval``
///   is it replaced by one to the new place, at once and without counting as a failure (the old
///   place may simply be gone). An attempt still opening to the old place is replaced at once.
/// - A peer is reachable until found otherwise: a newly tracked peer is not hidden while its
///   first probe runs.
public struct PeerLiveness<Key: Hashable & Sendable, Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The intervals (config `liveness.*`).
    public struct Timing: Sendable, Hashable {
        /// Between pings on an open connection (`liveness.interval`).
        public var interval: Duration
        /// Silence after which a peer is unreachable; also the longest a connection attempt may
        /// take (`liveness.timeout`).
        public var timeout: Duration
        /// Between connection attempts while the peer is not connected: half of `interval`.
        public var retryInterval: Duration
        /// How often the shell should call ``PeerLiveness/tick(now:)``.
        public var tickInterval: Duration

        public init(interval: Duration = .seconds(1), timeout: Duration = .seconds(2)) {
            self.interval = interval
            self.timeout = timeout
            self.retryInterval = interval / 2
            self.tickInterval = min(interval, timeout) / 20
        }
    }

    /// What the shell must do.
    public enum Action: Sendable, Hashable {
        /// Open a connection to the peer, send hello and a first ping, and report
        /// ``established(_:attempt:now:)`` when the peer has answered both,
        /// ``lost(_:attempt:now:)`` when it fails.
        case connect(Key, attempt: Int)
        /// Send a ping with this sequence number on the open connection.
        case ping(Key, attempt: Int, sequence: Int)
        /// Close this attempt's connection (it may still be opening); report nothing for it.
        case close(Key, attempt: Int)
        /// The peer is reachable (again).
        case reachable(Key)
        /// The peer stopped answering; it was last heard from at `lastHeard` (nil: never).
        case unreachable(Key, lastHeard: Instant?)
    }

    /// Whether a peer is reachable, as the machine last decided.
    public enum Status: Sendable, Hashable {
        /// Tracked but not probed yet: treated as reachable.
        case unknown
        case reachable
        case unreachable
    }

    private enum Link: Sendable {
        case idle(nextAttemptAt: Instant)
        case connecting(attempt: Int, deadline: Instant)
        case open(attempt: Int, nextPingAt: Instant)
    }

    private struct Entry: Sendable {
        var link: Link
        var status: Status = .unknown
        var lastHeard: Instant?
        /// Failed attempts or lost connections since the peer was last heard from.
        var failures = 0
        /// When the peer moved while its connection was open, until a frame on that connection
        /// shows it still works (``PeerLiveness/resolved(_:now:endpointChanged:)``).
        var movedAt: Instant?
    }

    public let timing: Timing
    private var entries: [Key: Entry] = [:]
    /// The tracked peers in the order ``tick(now:)`` visits them, by their text, kept as peers
    /// are tracked: a tick every 50 ms formats no key (it sorted them by their text at each tick,
    /// a Base32 encoding per comparison).
    private var order: [(text: String, key: Key)] = []
    private var nextAttempt = 1
    private var nextSequence = 1

    public init(timing: Timing = Timing()) { self.timing = timing }

    /// The peers tracked now.
    public var keys: Set<Key> { Set(entries.keys) }

    /// What the machine last decided about a peer; nil when it is not tracked.
    public func status(of key: Key) -> Status? { entries[key]?.status }

    /// When the peer was last heard from (connection established or any frame); nil when never.
    public func lastHeard(_ key: Key) -> Instant? { entries[key]?.lastHeard }

    /// Starts watching a peer; the first attempt goes at the next tick.
    public mutating func track(_ key: Key, now: Instant) {
        guard entries[key] == nil else { return }
        entries[key] = Entry(link: .idle(nextAttemptAt: now))
        let text = "\(key)"
        order.insert((text, key), at: order.firstIndex { $0.text > text } ?? order.endIndex)
    }

    /// Stops watching a peer (it left the directory or was unpaired).
    public mutating func untrack(_ key: Key) -> [Action] {
        guard let entry = entries.removeValue(forKey: key) else { return [] }
        order.removeAll { $0.key == key }
        return Self.attempt(of: entry.link).map { [.close(key, attempt: $0)] } ?? []
    }

    /// DNS-SD resolved the peer afresh: probe at once. When its address or port changed
    /// (`endpointChanged`), an attempt still opening to the old place is dropped for a new one;
    /// an open connection is kept and pinged at once, and replaced only when nothing is heard on
    /// it within ``Timing/retryInterval`` (``tick(now:)``): a working connection is never torn
    /// down for a change of route.
    public mutating func resolved(_ key: Key, now: Instant, endpointChanged: Bool) -> [Action] {
        guard var entry = entries[key] else { return [] }
        var actions: [Action] = []
        switch entry.link {
        case .idle:
            entry.link = .idle(nextAttemptAt: now)
        case .connecting(let attempt, _):
            if endpointChanged {
                actions.append(.close(key, attempt: attempt))
                entry.link = .idle(nextAttemptAt: now)
            }
        case .open(let attempt, _):
            entry.link = .open(attempt: attempt, nextPingAt: now)
            // From the first move not answered yet: a peer that keeps moving (a flapping record)
            // does not hold off the replacement.
            if endpointChanged, entry.movedAt == nil { entry.movedAt = now }
        }
        entries[key] = entry
        return actions
    }

    /// What the machine holds for a tracked peer now.
    public enum LinkState: Sendable, Hashable {
        /// No connection, and none opening.
        case idle
        /// Attempt `attempt` is opening.
        case connecting(attempt: Int)
        /// Attempt `attempt`'s connection is open.
        case open(attempt: Int)
    }

    /// The peer's link now; nil when it is not tracked.
    public func link(of key: Key) -> LinkState? {
        switch entries[key]?.link {
        case nil: nil
        case .idle?: .idle
        case .connecting(let attempt, _)?: .connecting(attempt: attempt)
        case .open(let attempt, _)?: .open(attempt: attempt)
        }
    }

    /// The peer's own connection to this side, which shares it (docs/PROTOCOL.md, "One connection
    /// per pair"), becomes this peer's connection: it is open and heard from now, as an attempt
    /// that was just established; an attempt still opening, or a connection open before, is
    /// closed. Returns the new connection's attempt number and the actions (nil when the peer is
    /// not tracked).
    public mutating func adopt(_ key: Key, now: Instant) -> (attempt: Int, actions: [Action])? {
        guard let entry = entries[key] else { return nil }
        let attempt = nextAttempt
        nextAttempt += 1
        var actions = Self.attempt(of: entry.link).map { [Action.close(key, attempt: $0)] } ?? []
        entries[key]?.link = .connecting(attempt: attempt, deadline: now)
        actions += established(key, attempt: attempt, now: now)
        return (attempt, actions)
    }

    /// The peer answered the hello and the first ping on attempt `attempt`: it is reachable.
    public mutating func established(_ key: Key, attempt: Int, now: Instant) -> [Action] {
        guard var entry = entries[key], case .connecting(attempt, _) = entry.link else { return [.close(key, attempt: attempt)] }
        entry.link = .open(attempt: attempt, nextPingAt: now.advanced(by: timing.interval))
        entry.lastHeard = now
        entry.failures = 0
        entry.movedAt = nil
        let wasReachable = entry.status == .reachable
        entry.status = .reachable
        entries[key] = entry
        return wasReachable ? [] : [.reachable(key)]
    }

    /// A frame (a pong) arrived on attempt `attempt`'s connection: it works, wherever the peer
    /// moved since.
    public mutating func heard(_ key: Key, attempt: Int, now: Instant) {
        guard var entry = entries[key], case .open(attempt, _) = entry.link else { return }
        entry.lastHeard = now
        entry.failures = 0
        entry.movedAt = nil
        entries[key] = entry
    }

    /// Attempt `attempt` failed (refused, timed out) or its connection closed.
    ///
    /// With `peerAnswered`, an agent did answer but the probe was refused: it presented another
    /// certificate, or no longer pairs with this device. That is a matter of trust, not of
    /// liveness: the peer's status does not change (continuing its activities reports the trust
    /// failure), and the next attempt waits for the retry interval.
    public mutating func lost(_ key: Key, attempt: Int, now: Instant, peerAnswered: Bool = false) -> [Action] {
        guard var entry = entries[key], Self.attempt(of: entry.link) == attempt else { return [] }
        guard !peerAnswered else {
            entry.link = .idle(nextAttemptAt: now.advanced(by: timing.retryInterval))
            entries[key] = entry
            return []
        }
        return fail(key, now: now)
    }

    /// The peer said on attempt `attempt`'s connection that it stops (`goodbye`, on the pinned
    /// connection: the device itself said it): it is unreachable at once, and tried again only
    /// after ``Timing/retryInterval`` (it may restart), not at once as after a connection that
    /// closed unannounced, which would reach it while it is still stopping.
    public mutating func saidGoodbye(_ key: Key, attempt: Int, now: Instant) -> [Action] {
        guard var entry = entries[key], Self.attempt(of: entry.link) == attempt else { return [] }
        entry.link = .idle(nextAttemptAt: now.advanced(by: timing.retryInterval))
        entry.failures = max(entry.failures, 2)
        entry.movedAt = nil
        var actions: [Action] = []
        if entry.status != .unreachable {
            entry.status = .unreachable
            actions.append(.unreachable(key, lastHeard: entry.lastHeard))
        }
        entries[key] = entry
        return actions
    }

    /// Advances time: starts attempts and pings that are due, and gives up on attempts and
    /// connections that have been silent for ``Timing/timeout``.
    public mutating func tick(now: Instant) -> [Action] {
        var actions: [Action] = []
        for (_, key) in order {
            guard var entry = entries[key] else { continue }
            switch entry.link {
            case .idle(let at) where now >= at:
                let attempt = nextAttempt
                nextAttempt += 1
                entry.link = .connecting(attempt: attempt, deadline: now.advanced(by: timing.timeout))
                entries[key] = entry
                actions.append(.connect(key, attempt: attempt))
            case .connecting(let attempt, let deadline) where now >= deadline:
                actions.append(.close(key, attempt: attempt))
                actions += fail(key, now: now)
            case .open(let attempt, let nextPingAt):
                if let movedAt = entry.movedAt, movedAt.duration(to: now) >= timing.retryInterval {
                    // The peer moved and its connection has said nothing since: it is replaced by
                    // one to the new place at once, with no failure counted (the old place may
                    // simply be gone); that attempt decides whether the peer is reachable.
                    entry.movedAt = nil
                    entry.link = .idle(nextAttemptAt: now)
                    entries[key] = entry
                    actions.append(.close(key, attempt: attempt))
                } else if entry.movedAt == nil, let heard = entry.lastHeard, heard.duration(to: now) >= timing.timeout {
                    // Silent for the whole timeout: no second chance, it has had several pings.
                    entry.failures = 1
                    entries[key] = entry
                    actions += fail(key, now: now)
                    actions.append(.close(key, attempt: attempt))
                } else if now >= nextPingAt {
                    entry.link = .open(attempt: attempt, nextPingAt: now.advanced(by: timing.interval))
                    entries[key] = entry
                    actions.append(.ping(key, attempt: attempt, sequence: nextSequence))
                    nextSequence += 1
                }
            default:
                break
            }
        }
        return actions
    }

    private mutating func fail(_ key: Key, now: Instant) -> [Action] {
        guard var entry = entries[key] else { return [] }
        entry.failures += 1
        entry.movedAt = nil
        var actions: [Action] = []
        if entry.failures >= 2, entry.status != .unreachable {
            entry.status = .unreachable
            actions.append(.unreachable(key, lastHeard: entry.lastHeard))
        }
        // The first failure after the peer was heard is retried at once: a closed connection is
        // confirmed (or not) by one more attempt.
        entry.link = .idle(nextAttemptAt: entry.failures == 1 ? now : now.advanced(by: timing.retryInterval))
        entries[key] = entry
        return actions
    }

    private static func attempt(of link: Link) -> Int? {
        switch link {
        case .idle: nil
        case .connecting(let attempt, _), .open(let attempt, _): attempt
        }
    }
}

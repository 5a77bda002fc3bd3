/// Whether the peer listener accepts a new connection before it has authenticated: bounds on the
/// connections still waiting to authenticate, overall and per address, and a per-address rate.
///
/// A pure value, generic over the clock's `Instant` (like Hummingbird's timers), so tests drive it
/// with a manual clock. The listener calls ``admit(address:now:)`` for each accepted socket and
/// closes it at once on ``Decision/refuse(reason:)``; on ``Decision/admit(_:evicting:)`` it keeps
/// the connection under the ``ConnectionID`` given and closes the evicted one, if any. Then it
/// calls ``authenticated(_:)`` when the TLS handshake has identified a paired device, and
/// ``closed(_:)`` when the connection ends.
///
/// When ``Limits/maxUnauthenticated`` connections are already waiting, a new one does not simply
/// bounce (that let a host with many addresses lock paired devices out, whose connections cannot
/// be told apart before TLS): it takes the place of the oldest waiting connection of the address
/// that holds the most, as long as that address holds more than the newcomer's address does. A paired
/// device authenticates within one TLS handshake and holds one waiting connection at a time, so a
/// flood from any number of addresses holding several each only evicts its own connections.
///
/// Each address has a token bucket holding up to ``Limits/burst`` tokens, refilled at
/// ``Limits/ratePerSecond``; every attempt, admitted or not, takes a token when there is one. The
/// table of buckets stays bounded: past ``Limits/maxTrackedAddresses`` addresses, buckets that are
/// full and have no open connection are forgotten (a forgotten bucket is the same as a full one),
/// then idle buckets closest to full, down to three quarters of the limit. Only addresses with
/// open connections are never forgotten.
public struct ConnectionAdmission<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The bounds.
    public struct Limits: Sendable, Hashable {
        /// The most connections waiting to authenticate, from all addresses together.
        public var maxUnauthenticated: Int
        /// The most connections waiting to authenticate from one address.
        public var maxUnauthenticatedPerAddress: Int
        /// New connections per second an address may make, sustained.
        public var ratePerSecond: Double
        /// New connections an address may make at once, after a quiet while.
        public var burst: Int
        /// How many addresses' buckets are kept before idle ones are forgotten.
        public var maxTrackedAddresses: Int

        /// Limits with the defaults: 64 waiting, 8 per address, 20 per second with bursts of 40,
        /// 1024 tracked addresses.
        public init(
            maxUnauthenticated: Int = 64,
            maxUnauthenticatedPerAddress: Int = 8,
            ratePerSecond: Double = 20,
            burst: Int = 40,
            maxTrackedAddresses: Int = 1024
        ) {
            self.maxUnauthenticated = maxUnauthenticated
            self.maxUnauthenticatedPerAddress = maxUnauthenticatedPerAddress
            self.ratePerSecond = ratePerSecond
            self.burst = burst
            self.maxTrackedAddresses = maxTrackedAddresses
        }
    }

    /// One admitted connection, until it closes.
    public struct ConnectionID: Sendable, Hashable, CustomStringConvertible {
        let value: UInt64
        public var description: String { "#\(value)" }
    }

    /// What to do with a new connection.
    public enum Decision: Sendable, Hashable {
        /// Accept it as `id`; it now counts as waiting to authenticate. Close `evicting` (a
        /// connection still waiting to authenticate, no longer counted) to make room for it.
        case admit(ConnectionID, evicting: ConnectionID?)
        /// Close it at once, for the reason given (for the log).
        case refuse(reason: String)

        /// Whether the connection is accepted.
        public var isAdmitted: Bool {
            if case .admit = self { true } else { false }
        }

        /// The accepted connection's ID, nil when refused.
        public var admitted: ConnectionID? {
            if case .admit(let id, _) = self { id } else { nil }
        }

        /// The connection to close to make room, if any.
        public var evicted: ConnectionID? {
            if case .admit(_, let evicting) = self { evicting } else { nil }
        }
    }

    private struct Bucket: Sendable {
        var tokens: Double
        var refilledAt: Instant
        var unauthenticated = 0
        var authenticated = 0
        var isIdle: Bool { unauthenticated == 0 && authenticated == 0 }
    }

    private struct Connection: Sendable {
        var address: String
        var admittedAt: Instant
        var isAuthenticated = false
    }

    /// The bounds in force.
    public let limits: Limits
    private var buckets: [String: Bucket] = [:]
    private var connections: [ConnectionID: Connection] = [:]
    private var nextID: UInt64 = 0
    /// The connections admitted that have not authenticated or closed yet.
    public private(set) var unauthenticatedCount = 0

    /// An admission policy with `limits`.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// How many addresses have a bucket (bounded near ``Limits/maxTrackedAddresses``).
    public var trackedAddressCount: Int { buckets.count }

    /// The connections from `address` that are waiting to authenticate.
    public func unauthenticatedCount(address: String) -> Int {
        buckets[IPAddressText.unmappingIPv4(address)]?.unauthenticated ?? 0
    }

    /// Whether `id` is admitted and has neither closed nor been evicted.
    public func isOpen(_ id: ConnectionID) -> Bool { connections[id] != nil }

    /// Decides on a new connection from `address` at `now` (an IPv4-mapped IPv6 address counts
    /// as its IPv4 address). An admitted connection counts as
    /// waiting to authenticate until ``authenticated(_:)``, ``closed(_:)`` or its eviction.
    public mutating func admit(address: String, now: Instant) -> Decision {
        // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d: one host, one bucket.
        let address = IPAddressText.unmappingIPv4(address)
        let isNew = buckets[address] == nil
        var bucket = buckets[address] ?? Bucket(tokens: Double(limits.burst), refilledAt: now)
        refill(&bucket, now: now)
        var decision: Decision
        if bucket.tokens < 1 {
            decision = .refuse(reason: "\(address) is connecting more than \(Self.format(limits.ratePerSecond)) times a second")
        } else {
            bucket.tokens -= 1
            if bucket.unauthenticated >= limits.maxUnauthenticatedPerAddress {
                decision = .refuse(reason: "\(address) already has \(limits.maxUnauthenticatedPerAddress) connections waiting to authenticate")
            } else if unauthenticatedCount < limits.maxUnauthenticated {
                decision = .admit(makeID(), evicting: nil)
            } else if let victim = evictionCandidate(forNewcomerHolding: bucket.unauthenticated) {
                decision = .admit(makeID(), evicting: victim)
            } else {
                decision = .refuse(reason: "\(limits.maxUnauthenticated) connections are already waiting to authenticate")
            }
        }
        buckets[address] = bucket
        if let evicted = decision.evicted { closed(evicted) }
        if let id = decision.admitted {
            connections[id] = Connection(address: address, admittedAt: now)
            buckets[address]!.unauthenticated += 1
            unauthenticatedCount += 1
        }
        if isNew && buckets.count > limits.maxTrackedAddresses { prune(now: now) }
        return decision
    }

    /// Connection `id` has authenticated: it no longer counts as waiting. Ignored for a
    /// connection closed or evicted meanwhile.
    public mutating func authenticated(_ id: ConnectionID) {
        guard var connection = connections[id], !connection.isAuthenticated else { return }
        connection.isAuthenticated = true
        connections[id] = connection
        buckets[connection.address]?.unauthenticated -= 1
        buckets[connection.address]?.authenticated += 1
        unauthenticatedCount -= 1
    }

    /// Connection `id` has closed (or was evicted). Ignored when already closed.
    public mutating func closed(_ id: ConnectionID) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        if connection.isAuthenticated {
            buckets[connection.address]?.authenticated -= 1
        } else {
            buckets[connection.address]?.unauthenticated -= 1
            unauthenticatedCount -= 1
        }
    }

    private mutating func makeID() -> ConnectionID {
        nextID &+= 1
        return ConnectionID(value: nextID)
    }

    /// The oldest waiting connection of the address holding the most waiting connections (ties:
    /// the address whose oldest is oldest), if that address holds more than the newcomer's
    /// (`newcomerHolds`); nil when the newcomer's address is among the greediest itself.
    private func evictionCandidate(forNewcomerHolding newcomerHolds: Int) -> ConnectionID? {
        var oldest: [String: (id: ConnectionID, at: Instant)] = [:]
        for (id, connection) in connections where !connection.isAuthenticated {
            if let known = oldest[connection.address], known.at < connection.admittedAt
                || (known.at == connection.admittedAt && known.id.value < id.value)
            {
                continue
            }
            oldest[connection.address] = (id, connection.admittedAt)
        }
        let best = oldest.max { a, b in
            let (countA, countB) = (buckets[a.key]?.unauthenticated ?? 0, buckets[b.key]?.unauthenticated ?? 0)
            if countA != countB { return countA < countB }
            if a.value.at != b.value.at { return a.value.at > b.value.at }
            return a.value.id.value > b.value.id.value
        }
        guard let best, (buckets[best.key]?.unauthenticated ?? 0) > newcomerHolds else { return nil }
        return best.value.id
    }

    private func refill(_ bucket: inout Bucket, now: Instant) {
        let elapsed = bucket.refilledAt.duration(to: now)
        guard elapsed > .zero else { return }
        bucket.tokens = min(Double(limits.burst), bucket.tokens + elapsed.inSeconds * limits.ratePerSecond)
        bucket.refilledAt = now
    }

    /// Forgets full idle buckets, then, while the table is above three quarters of the limit
    /// (so that pruning happens rarely), idle buckets closest to full.
    private mutating func prune(now: Instant) {
        let full = Double(limits.burst)
        for (address, var bucket) in buckets {
            refill(&bucket, now: now)
            buckets[address] = bucket.isIdle && bucket.tokens >= full ? nil : bucket
        }
        let target = max(0, limits.maxTrackedAddresses * 3 / 4)
        guard buckets.count > target else { return }
        let idle = buckets.filter { $0.value.isIdle }.sorted { $0.value.tokens > $1.value.tokens }
        for (address, _) in idle.prefix(buckets.count - target) {
            buckets[address] = nil
        }
    }

    private static func format(_ rate: Double) -> String {
        rate == rate.rounded() && abs(rate) < 1e15 ? String(Int(rate)) : String(rate)
    }
}

/// Whether the peer listener accepts a new connection before it has authenticated: bounds on the
/// connections still waiting to authenticate, overall and per address, and a per-address rate.
///
/// A pure value, generic over the clock's `Instant` (like Hummingbird's timers), so tests drive it
/// with a manual clock. The listener calls ``admit(address:now:)`` for each accepted socket and
/// closes it at once on ``Decision/refuse(reason:)``; then ``authenticated(address:)`` when the
/// TLS handshake has identified a paired device, and ``closed(address:wasAuthenticated:)`` when
/// the connection ends.
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

    /// What to do with a new connection.
    public enum Decision: Sendable, Hashable {
        /// Accept it; it now counts as waiting to authenticate.
        case admit
        /// Close it at once, for the reason given (for the log).
        case refuse(reason: String)
    }

    private struct Bucket: Sendable {
        var tokens: Double
        var refilledAt: Instant
        var unauthenticated = 0
        var authenticated = 0
        var isIdle: Bool { unauthenticated == 0 && authenticated == 0 }
    }

    /// The bounds in force.
    public let limits: Limits
    private var buckets: [String: Bucket] = [:]
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
        buckets[address]?.unauthenticated ?? 0
    }

    /// Decides on a new connection from `address` at `now`. An admitted connection counts as
    /// waiting to authenticate until ``authenticated(address:)`` or
    /// ``closed(address:wasAuthenticated:)``.
    public mutating func admit(address: String, now: Instant) -> Decision {
        let isNew = buckets[address] == nil
        var bucket = buckets[address] ?? Bucket(tokens: Double(limits.burst), refilledAt: now)
        refill(&bucket, now: now)
        let decision: Decision
        if bucket.tokens < 1 {
            decision = .refuse(reason: "\(address) is connecting more than \(Self.format(limits.ratePerSecond)) times a second")
        } else {
            bucket.tokens -= 1
            if unauthenticatedCount >= limits.maxUnauthenticated {
                decision = .refuse(reason: "\(limits.maxUnauthenticated) connections are already waiting to authenticate")
            } else if bucket.unauthenticated >= limits.maxUnauthenticatedPerAddress {
                decision = .refuse(reason: "\(address) already has \(limits.maxUnauthenticatedPerAddress) connections waiting to authenticate")
            } else {
                bucket.unauthenticated += 1
                unauthenticatedCount += 1
                decision = .admit
            }
        }
        buckets[address] = bucket
        if isNew && buckets.count > limits.maxTrackedAddresses { prune(now: now) }
        return decision
    }

    /// A connection from `address` has authenticated: it no longer counts as waiting.
    public mutating func authenticated(address: String) {
        guard var bucket = buckets[address], bucket.unauthenticated > 0 else { return }
        bucket.unauthenticated -= 1
        bucket.authenticated += 1
        unauthenticatedCount -= 1
        buckets[address] = bucket
    }

    /// A connection from `address` has closed; `wasAuthenticated` says whether
    /// ``authenticated(address:)`` was called for it.
    public mutating func closed(address: String, wasAuthenticated: Bool) {
        guard var bucket = buckets[address] else { return }
        if wasAuthenticated {
            guard bucket.authenticated > 0 else { return }
            bucket.authenticated -= 1
        } else {
            guard bucket.unauthenticated > 0 else { return }
            bucket.unauthenticated -= 1
            unauthenticatedCount -= 1
        }
        buckets[address] = bucket
    }

    private func refill(_ bucket: inout Bucket, now: Instant) {
        let elapsed = bucket.refilledAt.duration(to: now)
        guard elapsed > .zero else { return }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket.tokens = min(Double(limits.burst), bucket.tokens + seconds * limits.ratePerSecond)
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

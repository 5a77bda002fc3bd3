import HandoffCore

/// Which senders of unreadable advertisements the agent connects to, to learn a paired device's
/// new advertising key, and when.
///
/// Any LAN host can publish advertisements nobody can read, at any address and port, so asking
/// each of them is bounded:
/// - an endpoint whose port is below ``Limits/lowestAgentPort`` is never asked (agents listen on
///   ephemeral or configured unprivileged ports);
/// - all endpoints share a token bucket of ``Limits/burst`` probes, refilled at
///   ``Limits/probesPerSecond``;
/// - each endpoint is asked again no sooner than ``Limits/retryInterval`` after an exchange with
///   a paired device, and after a failure (nothing answered, or an unpaired device answered) only
///   after an exponential backoff from ``Limits/retryInterval`` up to ``Limits/maximumBackoff``;
///   an endpoint where an unpaired device answered waits ``Limits/maximumBackoff`` at once, or
///   until the paired devices change (``trustChanged(isPaired:)``);
/// - when tokens are short, endpoints with fewer failures go first, then those seen first.
///
/// So a paired device whose key rotated is asked within ``Limits/retryInterval`` plus one token
/// interval for each unreadable advertisement seen before it that never failed (at most the
/// browser's 63 others): about 94 s at worst with the defaults, at once without junk.
///
/// A pure value generic over the clock's instant; the agent calls ``due(_:now:)`` with its
/// unreadable advertisements and ``finished(_:answeredBy:isPaired:now:)`` with each outcome.
public struct KeyProbeSchedule<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The bounds.
    public struct Limits: Sendable, Hashable {
        /// Probes per second, sustained, to all endpoints together.
        public var probesPerSecond: Double = 1
        /// Probes at once after a quiet while.
        public var burst: Int = 8
        /// How long an endpoint waits after an exchange with a paired device, and after its
        /// first failure (doubling with each further one).
        public var retryInterval: Duration = .seconds(30)
        /// The longest wait, and the wait after an unpaired device answered.
        public var maximumBackoff: Duration = .seconds(30 * 60)
        /// Endpoints on lower ports are never asked.
        public var lowestAgentPort = 1024
        /// Endpoints remembered; past it, those whose wait ended longest ago are forgotten.
        public var maxTrackedEndpoints = 1024

        /// The defaults: 1 probe a second, 8 at once, 30 s to 30 min per endpoint, ports >= 1024.
        public init() {}
    }

    /// Where an advertisement points: its first address (or host) and port.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// An address, or a host name when the advertisement gave no address.
        public var host: String
        public var port: Int
        /// The endpoint `host:port`.
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
        public var description: String { "\(host):\(port)" }
    }

    private struct Record: Sendable {
        var failures = 0
        var notBefore: Instant
        /// The device that answered last, if any.
        var answeredBy: DeviceID?
        var firstSeen: Instant
    }

    /// The bounds in force.
    public let limits: Limits
    private var records: [Endpoint: Record] = [:]
    private var tokens: Double
    private var refilledAt: Instant?

    /// A schedule with `limits`, its bucket full.
    public init(limits: Limits = Limits()) {
        self.limits = limits
        tokens = Double(limits.burst)
    }

    /// Of `endpoints` (the senders of unreadable advertisements, in the order first seen), those
    /// to connect to now; each counts as asked. Nil `nextCheck` means nothing more will become
    /// due without a new advertisement; else call again after it.
    public mutating func due(_ endpoints: [Endpoint], now: Instant) -> (ask: [Endpoint], nextCheck: Duration?) {
        refill(now: now)
        var candidates: [(endpoint: Endpoint, record: Record, text: String)] = []
        var nextCheck: Duration?
        for endpoint in Set(endpoints) where endpoint.port >= limits.lowestAgentPort {
            let record = records[endpoint] ?? Record(notBefore: now, firstSeen: now)
            records[endpoint] = record
            let wait = now.duration(to: record.notBefore)
            if wait > .zero {
                nextCheck = min(nextCheck ?? wait, wait)
            } else {
                candidates.append((endpoint, record, endpoint.description))
            }
        }
        candidates.sort { a, b in
            if a.record.failures != b.record.failures { return a.record.failures < b.record.failures }
            if a.record.firstSeen != b.record.firstSeen { return a.record.firstSeen < b.record.firstSeen }
            return a.text < b.text  // formatted once per candidate, not per comparison
        }
        var ask: [Endpoint] = []
        for candidate in candidates {
            guard tokens >= 1 else {
                let refill = Duration.seconds((1 - tokens) / limits.probesPerSecond)
                nextCheck = min(nextCheck ?? refill, refill)
                break
            }
            tokens -= 1
            // Until the outcome is known, it is not asked again.
            records[candidate.endpoint]!.notBefore = now.advanced(by: limits.retryInterval)
            ask.append(candidate.endpoint)
        }
        prune(now: now)
        return (ask, nextCheck)
    }

    /// The probe of `endpoint` ended: `answeredBy` is the device that answered over TLS (nil if
    /// none did), `isPaired` whether it is paired (and the keys were exchanged).
    public mutating func finished(_ endpoint: Endpoint, answeredBy: DeviceID?, isPaired: Bool, now: Instant) {
        guard var record = records[endpoint] else { return }
        record.answeredBy = answeredBy
        if isPaired {
            record.failures = 0
            record.notBefore = now.advanced(by: limits.retryInterval)
        } else if answeredBy != nil {
            record.failures += 1
            record.notBefore = now.advanced(by: limits.maximumBackoff)
        } else {
            record.failures += 1
            record.notBefore = now.advanced(by: backoff(afterFailures: record.failures))
        }
        records[endpoint] = record
    }

    /// The paired devices changed: endpoints where a device now paired answered are asked again
    /// first, at once.
    public mutating func trustChanged(isPaired: (DeviceID) -> Bool) {
        for (endpoint, record) in records {
            guard let id = record.answeredBy, isPaired(id) else { continue }
            records[endpoint]!.failures = 0
            records[endpoint]!.notBefore = record.firstSeen
        }
    }

    /// How long an endpoint waits after `failures` failures in a row.
    func backoff(afterFailures failures: Int) -> Duration {
        var delay = limits.retryInterval
        for _ in 1..<max(1, failures) {
            delay *= 2
            if delay >= limits.maximumBackoff { return limits.maximumBackoff }
        }
        return min(delay, limits.maximumBackoff)
    }

    private mutating func refill(now: Instant) {
        defer { refilledAt = now }
        guard let last = refilledAt else { return }
        let elapsed = last.duration(to: now)
        guard elapsed > .zero else { return }
        tokens = min(Double(limits.burst), tokens + elapsed.inSeconds * limits.probesPerSecond)
    }

    private mutating func prune(now: Instant) {
        guard records.count > limits.maxTrackedEndpoints else { return }
        let oldest = records.sorted { $0.value.notBefore < $1.value.notBefore }
        for (endpoint, _) in oldest.prefix(records.count - limits.maxTrackedEndpoints) { records[endpoint] = nil }
    }
}

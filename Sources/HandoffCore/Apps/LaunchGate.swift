/// Decides whether the agent starts an app (from its manifest in `appsDirectory`) when a
/// continuation or a peer's `open` is for it and it is not running.
///
/// A paired device gone bad could otherwise start processes at will: each `open` for an app that
/// never registers spawned it again. So launches are single-flight per app (a request while one is
/// starting waits for that one), and each peer device may cause at most `burst` launches, refilled
/// at one per `refill`. Launches for this host's own user (continuing an activity) are not
/// rate-limited. A pure value over any clock: the agent passes its instants in.
public struct LaunchGate<Instant: InstantProtocol>: Sendable where Instant.Duration == Swift.Duration {
    /// What to do with a request for an app that is not running.
    public enum Decision: Sendable, Equatable {
        /// Start it.
        case launch
        /// It is starting already: wait for that launch.
        case join
        /// This device has caused too many launches; try again after the given time.
        case refuse(retryAfter: Duration)
    }

    /// Launches a device may cause at once.
    public var burst: Int
    /// The time after which a device may cause one more.
    public var refill: Duration

    private var starting: Set<String> = []
    private var buckets: [String: (tokens: Double, at: Instant)] = [:]

    public init(burst: Int = 3, refill: Duration = .seconds(20)) {
        self.burst = burst
        self.refill = refill
    }

    /// A request to start `bundleID`, for the peer device `device` (nil: this host's user).
    public mutating func request(_ bundleID: String, forDevice device: String?, now: Instant) -> Decision {
        if starting.contains(bundleID) { return .join }
        if let device {
            var bucket = buckets[device] ?? (Double(burst), now)
            let elapsed = bucket.at.duration(to: now)
            bucket.tokens = min(Double(burst), bucket.tokens + elapsed.inSeconds / refill.inSeconds)
            bucket.at = now
            guard bucket.tokens >= 1 else {
                buckets[device] = bucket
                return .refuse(retryAfter: refill * (1 - bucket.tokens))
            }
            bucket.tokens -= 1
            buckets[device] = bucket
        }
        starting.insert(bundleID)
        return .launch
    }

    /// The launch of `bundleID` ended (it registered, failed to start, or timed out).
    public mutating func finished(_ bundleID: String) {
        starting.remove(bundleID)
    }

    /// Whether `bundleID` is being started now.
    public func isStarting(_ bundleID: String) -> Bool { starting.contains(bundleID) }
}

/// How long to wait before re-registering or re-browsing after the DNS-SD daemon failed us
/// (Avahi reports a restarted or missing avahi-daemon as `kDNSServiceErr_Unknown`).
///
/// The delay starts at `initial` and doubles with every consecutive failure up to `maximum`.
/// Callers count failures from 1 and start counting again after a success.
public struct DNSServiceBackoff: Sendable, Hashable {
    /// The delay after the first failure.
    public var initial: Duration
    /// The longest delay.
    public var maximum: Duration

    /// Creates a policy; `maximum` below `initial` is raised to `initial`.
    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(5)) {
        self.initial = max(initial, .zero)
        self.maximum = max(maximum, self.initial)
    }

    /// The delay before the next attempt after `n` consecutive failures: zero for `n <= 0`,
    /// `initial` for 1, then doubling, never more than `maximum`.
    public func delay(afterFailures n: Int) -> Duration {
        guard n > 0 else { return .zero }
        var delay = initial
        for _ in 1..<min(n, 32) {
            delay *= 2
            if delay >= maximum { return maximum }
        }
        return min(delay, maximum)
    }
}

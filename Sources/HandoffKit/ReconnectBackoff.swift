/// How long a ``HandoffApplication`` waits before each attempt to reach its agent again after the
/// control connection dropped: 50 ms, doubling up to 2 s, back to 50 ms once the app is
/// registered again. Pure; the application sleeps.
struct ReconnectBackoff: Sendable, Equatable {
    /// The first wait.
    static let initial: Duration = .milliseconds(50)
    /// The longest wait.
    static let cap: Duration = .seconds(2)

    private var nextDelay = initial

    /// The wait before the next attempt; each call doubles the one after, up to ``cap``.
    mutating func next() -> Duration {
        let delay = nextDelay
        nextDelay = min(nextDelay * 2, Self.cap)
        return delay
    }

    /// Starts again from ``initial`` (the app is registered again).
    mutating func reset() { nextDelay = Self.initial }
}

/// A moment on the agent's monotonic clock: the time since the agent's clock was first read.
///
/// The agent's decisions (idempotency windows, launch rates, when to save or probe again) are
/// pure values generic over an instant; the agent gives them this one, read from whatever
/// `Clock` it was handed (``AgentTimeline``). So a test with a manual clock drives every timer of
/// the agent, and no decision reads a clock of its own.
public struct AgentInstant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
    /// The time since the timeline began.
    public var sinceStart: Duration

    /// The moment `sinceStart` after the timeline began.
    public init(sinceStart: Duration) { self.sinceStart = sinceStart }

    public func advanced(by duration: Duration) -> AgentInstant { AgentInstant(sinceStart: sinceStart + duration) }
    public func duration(to other: AgentInstant) -> Duration { other.sinceStart - sinceStart }
    public static func < (lhs: AgentInstant, rhs: AgentInstant) -> Bool { lhs.sinceStart < rhs.sinceStart }
    public var description: String { "t+\(sinceStart)" }
}

/// Reads any `Clock` as ``AgentInstant``s, and sleeps on it: the agent's one source of time.
/// A `Clock` itself, so the parts of the core generic over a clock (``ContinuationClient``,
/// ``IdleConnectionPool``) run on the same one.
public struct AgentTimeline: Clock, Sendable {
    public typealias Instant = AgentInstant

    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// A timeline on `clock` that begins now.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleeper = { try await clock.sleep(for: $0) }
    }

    /// Now, on this timeline.
    public var now: AgentInstant { AgentInstant(sinceStart: elapsed()) }

    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Sleeps until `instant` on the clock (at once if it has passed). Throws when cancelled.
    public func sleep(until instant: AgentInstant, tolerance: Duration? = nil) async throws {
        let remaining = now.duration(to: instant)
        if remaining > .zero { try await sleeper(remaining) }
    }
}

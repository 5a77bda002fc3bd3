import Synchronization

/// A clock whose time moves only when a test calls ``advance(by:)`` or ``advance(to:)``.
///
/// Code that takes a generic `Clock` (such as `ContinuationClient`) can be tested with it without
/// real time passing: a test starts the code under test, waits until it has started its timers
/// (``waitForSleepers(count:)``), then advances the clock past a deadline and checks what happened.
/// This is the mock-clock style of Hummingbird 2's clock-generic timers.
///
/// ```swift
/// let clock = ManualClock()
/// let task = Task { try await clock.sleep(for: .seconds(2)) }
/// try await clock.waitForSleepers(count: 1)
/// clock.advance(by: .seconds(2))   // the sleeper resumes
/// try await task.value
/// ```
///
/// Time starts at ``Instant/zero`` and never goes backwards. All state is protected by a
/// `Mutex`, so the clock can be shared between tasks.
public final class ManualClock: Clock, Sendable {
    /// Durations are Swift's `Duration`, so code generic over `Clock<Duration>` accepts this clock.
    public typealias Duration = Swift.Duration

    /// A point on a ``ManualClock``: the time elapsed since the clock's zero.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
        public typealias Duration = Swift.Duration

        /// The time since ``zero``.
        public var offset: Duration

        /// Creates the instant `offset` after ``zero``.
        public init(offset: Duration) { self.offset = offset }

        /// The clock's starting point.
        public static let zero = Instant(offset: .zero)

        /// The instant `duration` later (or earlier, for a negative duration).
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        /// The duration from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }

        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }

        public var description: String { "ManualClock.Instant(\(offset))" }
    }

    /// Thrown by the `waitFor…` helpers when the awaited condition did not come true.
    public struct WaitTimeout: Error, Sendable, CustomStringConvertible {
        /// What was awaited, and what the clock saw instead.
        public var description: String
    }

    private struct Sleeper: Sendable {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var now: Instant = .zero
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
    }

    private let state = Mutex(State())

    /// Creates a clock at ``Instant/zero``.
    public init() {}

    /// The current time.
    public var now: Instant { state.withLock { $0.now } }

    /// A manual clock resolves any instant exactly.
    public var minimumResolution: Duration { .zero }

    /// The number of tasks currently suspended in ``sleep(until:tolerance:)``.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The deadlines of the current sleepers, earliest first.
    public var sleeperDeadlines: [Instant] { state.withLock { $0.sleepers.values.map(\.deadline).sorted() } }

    /// Suspends until the clock has been advanced to `deadline` or beyond.
    ///
    /// Returns at once if the deadline has already been reached. Throws `CancellationError` if the
    /// task is cancelled before or while it sleeps; a cancelled sleeper no longer counts in
    /// ``sleeperCount``. `tolerance` is ignored: a manual clock is exact.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { s in
                    // Checked under the lock: if the cancellation handler already ran, it found
                    // nothing to remove, so this is the last chance to notice the cancellation.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= s.now { return .success(()) }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration` and resumes every sleeper whose deadline is reached.
    /// A negative duration is treated as zero: time never goes backwards.
    public func advance(by duration: Duration) {
        let target = state.withLock { $0.now.advanced(by: max(duration, .zero)) }
        advance(to: target)
    }

    /// Moves time forward to `instant` (if it is later than now) and resumes every sleeper whose
    /// deadline is reached, earliest deadline first.
    public func advance(to instant: Instant) {
        let due: [Sleeper] = state.withLock { s in
            if instant > s.now { s.now = instant }
            let now = s.now
            let dueIDs = s.sleepers.filter { $0.value.deadline <= now }.keys
            return dueIDs.compactMap { s.sleepers.removeValue(forKey: $0) }.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits (by yielding, never by sleeping) until at least `count` tasks are suspended in
    /// ``sleep(until:tolerance:)``, so a test can advance the clock knowing the timers it expects
    /// have started.
    ///
    /// - Throws: ``WaitTimeout`` after `maximumYields` yields without enough sleepers, instead
    ///   of hanging the test.
    public func waitForSleepers(count: Int, maximumYields: Int = 100_000) async throws {
        try await waitForSleepers(maximumYields: maximumYields, "at least \(count) sleeper(s)") { $0.count >= count }
    }

    /// Waits (by yielding) until some task sleeps until exactly `deadline`.
    ///
    /// - Throws: ``WaitTimeout`` after `maximumYields` yields without such a sleeper.
    public func waitForSleeper(until deadline: Instant, maximumYields: Int = 100_000) async throws {
        try await waitForSleepers(maximumYields: maximumYields, "a sleeper until \(deadline)") { $0.contains(deadline) }
    }

    /// Waits (by yielding) until the deadlines of the current sleepers, earliest first, satisfy
    /// `condition`.
    ///
    /// - Throws: ``WaitTimeout`` after `maximumYields` yields without the condition holding.
    public func waitForSleepers(
        maximumYields: Int = 100_000,
        _ what: String = "the expected sleepers",
        where condition: ([Instant]) -> Bool
    ) async throws {
        for _ in 0..<maximumYields {
            if condition(sleeperDeadlines) { return }
            await Task.yield()
        }
        if condition(sleeperDeadlines) { return }
        throw WaitTimeout(description: "ManualClock: gave up after \(maximumYields) yields waiting for \(what); sleepers now: \(sleeperDeadlines.map(\.offset)) at \(now.offset)")
    }
}

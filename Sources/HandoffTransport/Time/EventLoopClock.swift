import NIOCore

/// A `Clock` whose sleeps are timers of a NIO event loop: the continuous clock's time, with each
/// sleep a `scheduleTask` on the loop rather than a Dispatch timer.
///
/// handoffd runs its tasks and its I/O on one event loop thread (`TasksOnEventLoop`). A
/// `Task.sleep` there would still arm a timer of Dispatch, whose own thread then wakes twice (to
/// arm it and when it fires, even after the sleep was cancelled). On this clock the timer is an
/// entry in the loop's own timer heap, which the loop's `epoll_wait` already waits on: no other
/// thread wakes. The agent's deadlines and timers run on it (a continue arms two, the fetch's and
/// the handler's, and cancels both).
///
/// One difference from `ContinuousClock`'s own sleeps: NIO's timers run on the monotonic clock,
/// which stops while the machine is suspended: a sleep whose deadline passes during a suspension
/// ends after the resume by the time it still had to go when the machine went to sleep, instead
/// of at the resume (never early: `now` counts the suspension). The agent's periodic timers are
/// short (liveness ticks, expiry every 500 ms), so after a resume they fire within one period,
/// and then see all the time that passed.
///
/// Tests keep their manual clock; this one is only for the daemon.
public struct EventLoopClock: Clock, Sendable {
    public typealias Instant = ContinuousClock.Instant
    public typealias Duration = Swift.Duration

    /// The loop whose timers the sleeps are.
    public let eventLoop: any EventLoop

    /// A clock whose sleeps are timers of `eventLoop`.
    public init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// Now, on the continuous clock.
    public var now: Instant { .now }

    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    /// Sleeps until `deadline` (returns at once if it has passed). Throws `CancellationError`
    /// when the calling task is cancelled, before or during the sleep; the timer is then
    /// cancelled too. `tolerance` is not used: the loop's timers fire at their deadline.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let delay = Instant.now.duration(to: deadline)
        guard delay > .zero else { return }
        let timer = eventLoop.scheduleTask(in: TimeAmount(delay)) {}
        try await withTaskCancellationHandler {
            // A cancelled timer fails its future (EventLoopError.cancelled).
            do { try await timer.futureResult.get() } catch { throw CancellationError() }
        } onCancel: {
            timer.cancel()
        }
    }
}

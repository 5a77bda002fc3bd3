import Dispatch
import Synchronization

/// The timeouts of running children (``ChildProcess``), on one shared timer.
///
/// Every handler run has a timeout, and nearly every run ends long before it. A `Task.sleep`
/// per run registers a timer with Dispatch's manager thread and wakes it, run after run; here
/// the timer is armed only when a deadline comes earlier than the one it is armed for, so runs
/// that follow each other with the same timeout arm it once between them. When it fires, the
/// waits that are due end, and it is armed again for the earliest one left.
final class ChildTimeouts: Sendable {
    /// The one instance the agent's children share.
    static let shared = ChildTimeouts()

    private struct State {
        var waits: [ObjectIdentifier: Wait] = [:]
        /// When the earliest timer still to fire goes off (nil: none is armed).
        var armed: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    /// Where the timer fires: a queue of its own runs on Dispatch's overcommitting pool, so a
    /// timeout is not held back while the threads of the global queues are all busy.
    private let queue = DispatchQueue(label: "handoff.child-timeouts")

    /// Waits until `deadline` has passed (true), or until the calling task is cancelled (false).
    func wait(until deadline: ContinuousClock.Instant) async -> Bool {
        let wait = Wait(deadline: deadline)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let arm = state.withLock { state -> ContinuousClock.Instant? in
                    state.waits[ObjectIdentifier(wait)] = wait
                    guard state.armed.map({ deadline < $0 }) ?? true else { return nil }
                    state.armed = deadline
                    return deadline
                }
                if let arm { self.arm(for: arm) }
                // Cancelled already: it has been resumed, and is taken out again.
                if !wait.start(continuation) { _ = state.withLock { $0.waits.removeValue(forKey: ObjectIdentifier(wait)) } }
            }
        } onCancel: {
            guard wait.end(passed: false) else { return }
            _ = state.withLock { $0.waits.removeValue(forKey: ObjectIdentifier(wait)) }
        }
    }

    private func arm(for deadline: ContinuousClock.Instant) {
        let delay = ContinuousClock.now.duration(to: deadline)
        let (seconds, attoseconds) = max(delay, .zero).components
        let nanoseconds = Int(clamping: seconds) &* 1_000_000_000 &+ Int(attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(max(0, nanoseconds))) { self.fire() }
    }

    /// A timer went off: ends the waits that are due, and arms for the earliest one left.
    private func fire() {
        let now = ContinuousClock.now
        let (due, arm) = state.withLock { state -> ([Wait], ContinuousClock.Instant?) in
            if let armed = state.armed, armed <= now { state.armed = nil }
            let due = state.waits.values.filter { $0.deadline <= now }
            for wait in due { state.waits.removeValue(forKey: ObjectIdentifier(wait)) }
            guard let earliest = state.waits.values.map(\.deadline).min(), state.armed.map({ earliest < $0 }) ?? true else {
                return (due, nil)
            }
            state.armed = earliest
            return (due, earliest)
        }
        for wait in due { _ = wait.end(passed: true) }
        if let arm { self.arm(for: arm) }
    }

    /// One waiting task: resumed exactly once, by its deadline or by its cancellation.
    private final class Wait: Sendable {
        private enum Phase {
            case starting
            case waiting(CheckedContinuation<Bool, Never>)
            case ended
        }

        let deadline: ContinuousClock.Instant
        private let phase = Mutex(Phase.starting)

        init(deadline: ContinuousClock.Instant) { self.deadline = deadline }

        /// Holds the continuation until the wait ends; false (and resumed) when it was cancelled first.
        func start(_ continuation: CheckedContinuation<Bool, Never>) -> Bool {
            let cancelled = phase.withLock { phase -> Bool in
                guard case .starting = phase else { return true }
                phase = .waiting(continuation)
                return false
            }
            if cancelled { continuation.resume(returning: false) }
            return !cancelled
        }

        /// Ends the wait; false when it had ended already.
        func end(passed: Bool) -> Bool {
            let (continuation, ended) = phase.withLock { phase -> (CheckedContinuation<Bool, Never>?, Bool) in
                switch phase {
                case .ended: return (nil, false)
                case .starting:
                    phase = .ended
                    return (nil, true)
                case .waiting(let continuation):
                    phase = .ended
                    return (continuation, true)
                }
            }
            continuation?.resume(returning: passed)
            return ended
        }
    }
}

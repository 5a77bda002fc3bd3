import Synchronization

/// A time limit on an operation, measured on any `Clock`: the one way the agent bounds how long
/// something may take (a fetch, a handshake, a pairing, a key exchange). Tests pass a manual
/// clock, so deadlines are checked without real time passing.
///
/// The deadline is a child task that sleeps on the clock, in a task group around the operation:
/// it ends with the operation, and it never outlives its caller.
///
/// Two ways to apply it:
/// - ``race(_:on:onTimeout:_:)``: the operation runs in a child task; whichever ends first wins.
///   On expiry, `onTimeout` runs (to unblock I/O), the operation is cancelled, and the outcome
///   is ``Outcome/timedOut``.
/// - ``watch(_:on:isolation:onExpiry:_:)``: the operation runs in the calling task and always
///   gives its own result. When the deadline passes first, `onExpiry` runs, typically closing the
///   connection the operation reads so that it ends; the result says whether that happened.
public enum Deadline {
    /// How a raced operation ended.
    public enum Outcome<T: Sendable>: Sendable {
        /// The operation returned first.
        case value(T)
        /// The operation threw first.
        case failed(any Error)
        /// The deadline passed first.
        case timedOut
    }

    /// Runs `operation` until it finishes or `timeout` passes on `clock`, whichever is first.
    /// On expiry `onTimeout` runs before the operation is cancelled, so it can unblock I/O. If
    /// the calling task is cancelled, so is the operation, and the outcome is what it gives.
    public static func race<C: Clock, T: Sendable>(
        _ timeout: Duration,
        on clock: C,
        onTimeout: @Sendable () async -> Void = {},
        _ operation: @escaping @Sendable () async throws -> T
    ) async -> Outcome<T> where C.Duration == Duration {
        await withTaskGroup(of: Outcome<T>?.self) { group in
            group.addTask {
                do { return .value(try await operation()) } catch { return .failed(error) }
            }
            group.addTask {
                await passes(timeout, on: clock) ? .timedOut : nil  // nil: cancelled, the operation won
            }
            // The deadline answers nil only when cancelled; then wait for the operation, which
            // sees the same cancellation.
            var first: Outcome<T> = .failed(CancellationError())
            while let next = await group.next() {
                guard let outcome = next else { continue }
                first = outcome
                break
            }
            if case .timedOut = first { await onTimeout() }
            group.cancelAll()
            return first
        }
    }

    /// Runs `operation` in the calling task (so it may use the caller's isolation and non-sendable
    /// state) and returns what it gives. If `timeout` passes on `clock` before it ends,
    /// `onExpiry` runs concurrently with it; the operation is not cancelled, so `onExpiry` must
    /// make it end (close the connection it reads).
    ///
    /// - Parameter expiresOnCancellation: also run `onExpiry` at once when the calling task is
    ///   cancelled before the operation ends (for an operation that waits on something a
    ///   cancellation does not end, such as a continuation): a wait then never outlives its caller.
    /// - Returns: the operation's result, and whether the deadline passed (or, with
    ///   `expiresOnCancellation`, the caller was cancelled) before it ended.
    public static func watch<C: Clock, T, E: Error>(
        _ timeout: Duration,
        on clock: C,
        expiresOnCancellation: Bool = false,
        isolation: isolated (any Actor)? = #isolation,
        onExpiry: @escaping @Sendable () async -> Void,
        _ operation: nonisolated(nonsending) () async throws(E) -> T
    ) async throws(E) -> (value: T, expired: Bool) where C.Duration == Duration {
        var result: Result<T, E>?
        let ended = OperationEnded()
        let expired = await withTaskGroup(of: Bool.self, isolation: isolation) { group in
            // Naming `isolation` here makes this closure run on it, and so `operation`
            // (nonisolated(nonsending)) too. Swift 6.3 runs a closure that names no isolated value
            // on the global executor, whatever `isolation:` says: an operation that calls back into
            // its caller's actor state would then race with it (DeadlineIsolationTests).
            _ = isolation
            group.addTask {
                let passed = await passes(timeout, on: clock)
                // Woken early: the operation ended (no expiry), or the caller was cancelled.
                guard passed || (expiresOnCancellation && !ended.value.load(ordering: .acquiring)) else { return false }
                await onExpiry()
                return true
            }
            do throws(E) { result = .success(try await operation()) } catch { result = .failure(error) }
            ended.value.store(true, ordering: .releasing)
            group.cancelAll()
            return await group.next() ?? false
        }
        return (try result!.get(), expired)
    }

    /// Set once the watched operation has ended, so that the deadline's task, cancelled then,
    /// tells that apart from its caller being cancelled.
    private final class OperationEnded: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// Sleeps until `timeout` has passed on `clock`: true then, false if cancelled first.
    private static func passes<C: Clock>(_ timeout: Duration, on clock: C) async -> Bool where C.Duration == Duration {
        do {
            try await clock.sleep(for: timeout)
            return true
        } catch {
            return false
        }
    }
}

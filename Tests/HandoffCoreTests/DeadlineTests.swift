import HandoffCore
import HandoffTestSupport
import Synchronization
import Testing

/// `Deadline` on a `ManualClock`: each way of applying it at its boundary, one nanosecond before
/// the deadline and at it. No real time passes.
@Suite("Deadline: one clock-driven time limit")
struct DeadlineTests {
    static let timeout = Duration.seconds(5)

    /// Something an operation can wait on until a test or an expiry opens it.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

        func wait() async {
            await withCheckedContinuation { continuation in
                let resume = state.withLock { s -> Bool in
                    if s.open { return true }
                    s.waiter = continuation
                    return false
                }
                if resume { continuation.resume() }
            }
        }

        func open() {
            state.withLock { s in
                s.open = true
                let waiter = s.waiter
                s.waiter = nil
                return waiter
            }?.resume()
        }

        var isOpen: Bool { state.withLock { $0.open } }
    }

    // MARK: race

    @Test("race: an operation still running one nanosecond before the deadline times out at it, and is cancelled")
    func raceTimesOutAtTheBoundary() async throws {
        let clock = ManualClock()
        let timedOut = Gate()
        let task = Task {
            await Deadline.race(Self.timeout, on: clock, onTimeout: { timedOut.open() }) { () async throws -> Int in
                try await Task.sleep(for: .seconds(3600))  // only cancellation ends it (real time never passes here)
                return 1
            }
        }
        try await clock.waitForSleeper(until: .zero.advanced(by: Self.timeout))

        clock.advance(by: Self.timeout - .nanoseconds(1))
        #expect(clock.sleeperCount == 1, "the deadline has not passed yet")
        #expect(!timedOut.isOpen)

        clock.advance(by: .nanoseconds(1))
        let outcome = await task.value
        guard case .timedOut = outcome else {
            Issue.record("expected .timedOut, got \(outcome)")
            return
        }
        #expect(timedOut.isOpen, "onTimeout ran")
        #expect(clock.sleeperCount == 0)
    }

    @Test("race: an operation that ends first gives its value, and the deadline is cancelled")
    func raceOperationWins() async throws {
        let clock = ManualClock()
        let outcome = await Deadline.race(Self.timeout, on: clock) { 42 }
        guard case .value(42) = outcome else {
            Issue.record("expected .value(42), got \(outcome)")
            return
        }
        #expect(clock.sleeperCount == 0)
    }

    @Test("race: an operation that throws first gives its error")
    func raceOperationFails() async throws {
        struct Refused: Error {}
        let outcome = await Deadline.race(Self.timeout, on: ManualClock()) { () async throws -> Int in throw Refused() }
        guard case .failed(let error) = outcome, error is Refused else {
            Issue.record("expected .failed(Refused), got \(outcome)")
            return
        }
    }

    // MARK: watch

    @Test("watch: at the deadline, and not one nanosecond before, onExpiry runs; the operation ends with its own result")
    func watchExpiresAtTheBoundary() async throws {
        let clock = ManualClock()
        // The operation waits for its "connection" to close; the expiry closes it.
        let connection = Gate()
        let task = Task {
            await Deadline.watch(Self.timeout, on: clock, onExpiry: { connection.open() }) { () async -> String in
                await connection.wait()
                return "closed"
            }
        }
        try await clock.waitForSleeper(until: .zero.advanced(by: Self.timeout))

        clock.advance(by: Self.timeout - .nanoseconds(1))
        #expect(clock.sleeperCount == 1, "the deadline has not passed yet")
        #expect(!connection.isOpen, "onExpiry has not run")

        clock.advance(by: .nanoseconds(1))
        let (value, expired) = await task.value
        #expect(value == "closed")
        #expect(expired)
        #expect(clock.sleeperCount == 0)
    }

    @Test("watch: an operation that ends first is not expired, and the deadline is cancelled")
    func watchOperationFirst() async throws {
        let clock = ManualClock()
        let expiries = Atomic<Int>(0)
        let (value, expired) = await Deadline.watch(Self.timeout, on: clock, onExpiry: { expiries.add(1, ordering: .relaxed) }) { 7 }
        #expect(value == 7)
        #expect(!expired)
        #expect(expiries.load(ordering: .relaxed) == 0)
        #expect(clock.sleeperCount == 0)
    }

    @Test("watch with expiresOnCancellation: a cancelled caller runs onExpiry at once, long before the deadline; without it, it does not")
    func watchExpiresOnCancellation() async throws {
        let clock = ManualClock()
        let connection = Gate()
        let task = Task {
            await Deadline.watch(Self.timeout, on: clock, expiresOnCancellation: true, onExpiry: { connection.open() }) { () async -> String in
                await connection.wait()
                return "closed"
            }
        }
        try await clock.waitForSleeper(until: .zero.advanced(by: Self.timeout))
        task.cancel()
        let (value, expired) = await task.value
        #expect(value == "closed")
        #expect(expired)
        #expect(clock.now == .zero, "no time passed")

        let expiries = Atomic<Int>(0)
        let plain = Task { await Deadline.watch(Self.timeout, on: clock, onExpiry: { expiries.add(1, ordering: .relaxed) }) { 7 } }
        plain.cancel()
        #expect(await plain.value.expired == false)
        #expect(expiries.load(ordering: .relaxed) == 0)
    }

    @Test("watch: the operation's error is thrown as its own type")
    func watchRethrows() async throws {
        struct Broken: Error, Equatable {}
        await #expect(throws: Broken()) {
            _ = try await Deadline.watch(Self.timeout, on: ManualClock(), onExpiry: {}) { () async throws(Broken) -> Int in throw Broken() }
        }
    }

    @Test("watch: the operation runs in the caller's isolation, so it may change the caller's state")
    func watchKeepsIsolation() async throws {
        let counter = DeadlineCounter()
        let expired = await counter.bump(on: ManualClock())
        #expect(!expired)
        #expect(await counter.count == 1)
    }

    // MARK: Duration units

    @Test("durations in the units other APIs need")
    func units() {
        let cases: [(duration: Duration, seconds: Double, nanoseconds: Int64, milliseconds: Int64, text: String)] = [
            (.seconds(2), 2.0, 2_000_000_000, 2_000, "2 s"),
            (.milliseconds(250), 0.25, 250_000_000, 250, "0.25 s"),
            (.milliseconds(1_500) + .nanoseconds(999_999), 1.500999999, 1_500_999_999, 1_500, "1.500999999 s"),
        ]
        for c in cases {
            #expect(c.duration.inSeconds == c.seconds)
            #expect(c.duration.nanoseconds == c.nanoseconds)
            #expect(c.duration.wholeMilliseconds == c.milliseconds)
            #expect(c.duration.secondsText == c.text)
        }
    }

    @Test("nanoseconds are clamped to Int64")
    func nanosecondsClamped() {
        #expect(Duration.seconds(Int64.max).nanoseconds == .max)
        #expect(Duration.seconds(Int64.min).nanoseconds == .min)
    }
}

/// State of an actor that a watched operation changes.
private actor DeadlineCounter {
    var count = 0

    func bump(on clock: ManualClock) async -> Bool {
        await Deadline.watch(DeadlineTests.timeout, on: clock, onExpiry: {}) { count += 1 }.expired
    }
}

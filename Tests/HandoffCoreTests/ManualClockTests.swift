import HandoffTestSupport
import Synchronization
import Testing

/// A value shared between a test and the tasks it starts.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value { mutex.withLock { $0 } }
    func update(_ body: @Sendable (inout Value) -> Void) { mutex.withLock { body(&$0) } }
}

@Suite("ManualClock (test support)")
struct ManualClockTests {
    @Test("time starts at zero and moves only when advanced")
    func advancing() {
        let clock = ManualClock()
        #expect(clock.now == .zero)
        #expect(clock.minimumResolution == .zero)
        clock.advance(by: .seconds(3))
        #expect(clock.now == .zero.advanced(by: .seconds(3)))
        clock.advance(to: .zero.advanced(by: .seconds(1)))
        #expect(clock.now.offset == .seconds(3), "time never goes backwards")
        clock.advance(by: .seconds(-1))
        #expect(clock.now.offset == .seconds(3))
    }

    @Test("instants measure durations between them")
    func instants() {
        let a = ManualClock.Instant(offset: .seconds(1))
        let b = a.advanced(by: .milliseconds(500))
        #expect(a.duration(to: b) == .milliseconds(500))
        #expect(b.duration(to: a) == .milliseconds(-500))
        #expect(a < b)
    }

    @Test("a sleep whose deadline has been reached returns at once")
    func pastDeadline() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(1))
        try await clock.sleep(until: .zero.advanced(by: .seconds(1)), tolerance: nil)
        try await clock.sleep(until: .zero, tolerance: nil)
        try await clock.sleep(for: .zero)
        #expect(clock.sleeperCount == 0)
    }

    @Test("a sleeper wakes when time reaches its deadline, not before")
    func wakesAtDeadline() async throws {
        let clock = ManualClock()
        let woke = Shared(false)
        let task = Task {
            try await clock.sleep(for: .seconds(2))
            woke.update { $0 = true }
        }
        try await clock.waitForSleepers(count: 1)
        #expect(clock.sleeperDeadlines == [.zero.advanced(by: .seconds(2))])
        clock.advance(by: .milliseconds(1_999))
        #expect(clock.sleeperCount == 1)
        #expect(!woke.value)
        clock.advance(by: .milliseconds(1))
        try await task.value
        #expect(woke.value)
        #expect(clock.sleeperCount == 0)
    }

    @Test("advancing past several deadlines wakes them all")
    func wakesInOrder() async throws {
        let clock = ManualClock()
        let order = Shared<[Int]>([])
        var tasks: [Task<Void, any Error>] = []
        for seconds in [3, 1, 2] {
            tasks.append(Task {
                try await clock.sleep(for: .seconds(seconds))
                order.update { $0.append(seconds) }
            })
            // Register one at a time so each task measures from time zero.
            try await clock.waitForSleepers(count: tasks.count)
        }
        clock.advance(by: .seconds(10))
        for task in tasks { try await task.value }
        #expect(Set(order.value) == [1, 2, 3])
        #expect(clock.sleeperCount == 0)
    }

    @Test("cancelling a sleeper throws CancellationError and removes it")
    func cancellation() async throws {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(60)) }
        try await clock.waitForSleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("a task cancelled before it sleeps throws at once")
    func cancelledBeforeSleeping() async {
        let clock = ManualClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("waiting for sleepers that never come gives up with a clear error")
    func waitGivesUp() async {
        let clock = ManualClock()
        let error = await #expect(throws: ManualClock.WaitTimeout.self) { try await clock.waitForSleepers(count: 1, maximumYields: 100) }
        #expect(error?.description.contains("gave up after 100 yields waiting for at least 1 sleeper(s)") == true)
    }
}

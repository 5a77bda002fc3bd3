@testable import HandoffTransport
import NIOCore
import NIOPosix
import Testing

/// The daemon's clock: sleeps that are timers of its event loop. Only lower bounds on real time
/// are asserted (a sleep never ends early), so the tests do not depend on the machine's speed.
@Suite("EventLoopClock: sleeps as the event loop's timers", .timeLimit(.minutes(1)))
struct EventLoopClockTests {
    let clock = EventLoopClock(eventLoop: MultiThreadedEventLoopGroup.singleton.any())

    @Test("a sleep lasts at least its duration, and ends on the loop's timer")
    func sleepLasts() async throws {
        let start = ContinuousClock.now
        try await clock.sleep(for: .milliseconds(30))
        #expect(start.duration(to: .now) >= .milliseconds(30))
        #expect(clock.now >= start + .milliseconds(30))
    }

    @Test("a deadline that has passed returns at once")
    func pastDeadline() async throws {
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)))
        try await clock.sleep(for: .zero)
    }

    @Test("cancelling a sleeping task ends its hour-long sleep with CancellationError")
    func cancelledDuringSleep() async throws {
        let started = AsyncStream<Void>.makeStream()
        let sleeper = Task { [clock] in
            started.continuation.yield()
            try await clock.sleep(for: .seconds(3600))
        }
        for await _ in started.stream { break }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test("a task cancelled before it sleeps does not sleep")
    func cancelledBefore() async throws {
        let sleeper = Task { [clock] in
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(3600))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    @Test("many sleeps at once all end, the longest after its own duration")
    func manySleeps() async throws {
        let start = ContinuousClock.now
        let ended = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in [3, 1, 2] {
                group.addTask { [clock] in
                    try await clock.sleep(for: .milliseconds(20 * index))
                    return index
                }
            }
            var ended: Set<Int> = []
            for try await index in group { ended.insert(index) }
            return ended
        }
        #expect(ended == [1, 2, 3])
        #expect(start.duration(to: .now) >= .milliseconds(60))
    }
}

import Synchronization
import Testing

@testable import HandoffAgent

/// The children's timeouts on one shared timer: each wait ends at its own deadline, whatever
/// order the deadlines come in, and a cancelled wait ends at once.
@Suite("ChildTimeouts: the children's timeouts on one shared timer", .timeLimit(.minutes(1)))
struct ChildTimeoutsTests {
    @Test("a wait ends when its deadline has passed, not before")
    func passes() async {
        let timeouts = ChildTimeouts()
        let start = ContinuousClock.now
        #expect(await timeouts.wait(until: start + .milliseconds(30)))
        #expect(ContinuousClock.now - start >= .milliseconds(30))
    }

    @Test("a deadline earlier than the armed one re-arms the timer; a later one waits for its own")
    func earlierAndLater() async {
        let timeouts = ChildTimeouts()
        let start = ContinuousClock.now
        let ended = Mutex<[String]>([])
        async let late: Bool = {
            let passed = await timeouts.wait(until: start + .seconds(3))
            ended.withLock { $0.append("late") }
            return passed
        }()
        try? await Task.sleep(for: .milliseconds(10))  // the late one has armed the timer
        #expect(await timeouts.wait(until: start + .milliseconds(30)))
        ended.withLock { $0.append("early") }
        #expect(await late)
        #expect(ContinuousClock.now - start >= .seconds(3))
        #expect(ended.withLock { $0 } == ["early", "late"], "the earlier deadline is not held until the later one")
    }

    @Test("a cancelled wait ends at once with false, and the others still end at their deadlines")
    func cancelled() async {
        let timeouts = ChildTimeouts()
        let start = ContinuousClock.now
        let waiting = Task { await timeouts.wait(until: start + .seconds(30)) }
        async let other = timeouts.wait(until: start + .milliseconds(40))
        waiting.cancel()
        #expect(await waiting.value == false)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(await other)
    }

    @Test("a wait started in a cancelled task ends at once")
    func cancelledBefore() async {
        let timeouts = ChildTimeouts()
        let waiting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await timeouts.wait(until: .now + .seconds(30))
        }
        #expect(await waiting.value == false)
    }
}

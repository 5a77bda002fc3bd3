import Foundation
import HandoffCore
import HandoffTestSupport
import NIOCore
import Synchronization
import Testing

@testable import HandoffAgent

/// Fault injection as a decorator of how apps are asked to save (issue 16, item 4):
/// `faults.willSaveDelayMs` acts in ``SlowActivitySaving`` alone, on top of a saving that records
/// what reached it. The whole path runs on hosts in FaultMatrixTests.
@Suite("Fault injection: SlowActivitySaving", .timeLimit(.minutes(1)))
struct ActivitySavingTests {
    /// A saving that answers at once and records the time it was given.
    final class Recording: ActivitySaving {
        let timeouts = Mutex<[Duration]>([])

        func save(_ id: UUID, by app: AppIdentity, over link: ControlLink, within timeout: Duration,
                  agent: isolated Agent) async -> Result<JSONValue, HandoffError> {
            timeouts.withLock { $0.append(timeout) }
            return .success(.object(["title": .string("saved")]))
        }
    }

    static let app = AppIdentity(bundleID: "com.example.notes", teamID: "TEAM")
    static let link = ControlLink(outbound: NIOAsyncChannelOutboundWriter<Frame>.makeTestingWriter().0)

    func save(_ saving: any ActivitySaving, within timeout: Duration, agent: Agent) async -> Result<JSONValue, HandoffError> {
        await saving.save(Sample.id(1), by: Self.app, over: Self.link, within: timeout, agent: agent)
    }

    @Test("willSaveDelayMs: the app is asked after the delay on the agent's clock, with what is left of the timeout")
    func delayUnderTimeout() async throws {
        let clock = ManualClock()
        let agent = makeAgent(clock: clock)
        let base = Recording()
        let saving = SlowActivitySaving(base: base, delay: .milliseconds(300))
        let saved = Task { await save(saving, within: .seconds(1), agent: agent) }
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(299))
        #expect(clock.sleeperCount == 1, "still slowed 1 ms before the delay")
        #expect(base.timeouts.withLock { $0 }.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(await saved.value == .success(.object(["title": .string("saved")])))
        #expect(base.timeouts.withLock { $0 } == [.milliseconds(700)])
    }

    @Test("willSaveDelayMs: a delay of the whole timeout fails with 4610 at the timeout, and the app is not asked")
    func delayPastTimeout() async throws {
        let clock = ManualClock()
        let agent = makeAgent(clock: clock)
        let base = Recording()
        let saved = Task { await save(SlowActivitySaving(base: base, delay: .seconds(3)), within: .seconds(1), agent: agent) }
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        let error = try #require(await saved.value.error)
        #expect(error.code == .userActivityRemoteApplicationTimedOut)
        #expect(error.message == "the app com.example.notes on unit-host did not save the activity within 1.0 seconds (userActivityWillSave; faults.willSaveDelayMs)")
        #expect(base.timeouts.withLock { $0 }.isEmpty)
    }

    @Test("the saving is slowed only while willSaveDelayMs is set")
    func decoratorOnlyWithTheFault() throws {
        var plan = FaultPlan()
        #expect(plan.activitySaving is AppActivitySaving)
        try plan.apply(assignment: "payloadDelayMs=10")
        #expect(plan.activitySaving is AppActivitySaving)
        try plan.apply(assignment: "willSaveDelayMs=250")
        let slow = try #require(plan.activitySaving as? SlowActivitySaving)
        #expect(slow.delay == .milliseconds(250))
        #expect(slow.base is AppActivitySaving)
    }
}

import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

@Suite("IdempotencyLedger: a retried continuation runs no handler twice")
struct IdempotencyLedgerTests {
    typealias Ledger = IdempotencyLedger<String, ManualClock.Instant>
    let clock = ManualClock()
    let activity = UUID()

    @Test("a new key runs; the same key while running waits; once finished it replays")
    func runWaitReplay() {
        var ledger = Ledger()
        guard case .run = ledger.begin("k", activityID: activity, now: clock.now) else { Issue.record("a new key must run"); return }
        guard case .wait = ledger.begin("k", activityID: activity, now: clock.now) else { Issue.record("a running key must wait"); return }
        ledger.finish("k", value: "delivered", handlerStarted: true, now: clock.now)
        guard case .replay("delivered") = ledger.begin("k", activityID: activity, now: clock.now) else { Issue.record("a finished key must replay"); return }
    }

    @Test("a failure before any handler ran is forgotten, so the retry runs")
    func failureBeforeHandler() {
        var ledger = Ledger()
        _ = ledger.begin("k", activityID: activity, now: clock.now)
        ledger.finish("k", value: "4609", handlerStarted: false, now: clock.now)
        guard case .run = ledger.begin("k", activityID: activity, now: clock.now) else { Issue.record("the retry must run"); return }
    }

    @Test("a key reused for another activity is refused")
    func conflict() {
        var ledger = Ledger()
        _ = ledger.begin("k", activityID: activity, now: clock.now)
        guard case .conflict(let first) = ledger.begin("k", activityID: UUID(), now: clock.now) else { Issue.record("must conflict"); return }
        #expect(first == activity)
    }

    @Test("finished keys expire after the retention, and the oldest finished go first past the capacity")
    func retentionAndCapacity() {
        var ledger = Ledger(capacity: 2, retention: .seconds(60))
        for key in ["a", "b"] {
            _ = ledger.begin(key, activityID: activity, now: clock.now)
            ledger.finish(key, value: key, handlerStarted: true, now: clock.now)
        }
        _ = ledger.begin("c", activityID: activity, now: clock.now)
        #expect(ledger.count == 2)
        guard case .run = ledger.begin("a", activityID: activity, now: clock.now) else { Issue.record("a was evicted"); return }
        // Taking "a" back in pushed out "b", the oldest finished key; running keys are never pushed out.
        clock.advance(by: .seconds(61))
        guard case .run = ledger.begin("b", activityID: activity, now: clock.now) else { Issue.record("b expired"); return }
        guard case .wait = ledger.begin("c", activityID: activity, now: clock.now) else { Issue.record("running keys never expire"); return }
    }
}

import HandoffCore
import Testing

@testable import HandoffAgent

@Suite("DNSSDUpdateSchedule: DNS-SD after the push, as a pure value")
struct DNSSDUpdateScheduleTests {
    typealias Directive = DNSSDUpdateSchedule.Directive
    static func at(_ ms: Int64) -> AgentInstant { AgentInstant(sinceStart: .milliseconds(ms)) }

    @Test("no device subscribed to the push: every change goes to DNS-SD at once")
    func nobodySubscribed() {
        var schedule = DNSSDUpdateSchedule(settle: .milliseconds(50))
        let first = schedule.changed(subscribers: 0, now: Self.at(0))
        let second = schedule.changed(subscribers: 0, now: Self.at(1))
        #expect([first, second] == [.updateNow, .updateNow])
        #expect(schedule.waitingUntil == nil)
    }

    @Test("devices subscribed: the first change waits the settle, later ones ride along, the wait's end sends")
    func throttled() {
        var schedule = DNSSDUpdateSchedule(settle: .milliseconds(50))
        let changes = [schedule.changed(subscribers: 2, now: Self.at(10)), schedule.changed(subscribers: 2, now: Self.at(20)),
                       schedule.changed(subscribers: 1, now: Self.at(59))]
        #expect(changes == [.wake(at: Self.at(60)), Directive.none, Directive.none])
        let ended = schedule.settled(Self.at(60))
        #expect(ended)
        // The next change starts a new wait: at most one update per settle, never starved.
        let next = schedule.changed(subscribers: 1, now: Self.at(61))
        #expect(next == .wake(at: Self.at(111)))
        let stale = schedule.settled(Self.at(60))
        #expect(!stale, "a wake for an earlier wait sends nothing")
        let endedAgain = schedule.settled(Self.at(111))
        let twice = schedule.settled(Self.at(111))
        #expect(endedAgain && !twice, "each wait sends once")
    }

    @Test("the last subscriber gone while a wait runs: the change goes at once, the wait still ends")
    func subscriberGoneDuringWait() {
        var schedule = DNSSDUpdateSchedule(settle: .milliseconds(50))
        let changes = [schedule.changed(subscribers: 1, now: Self.at(0)), schedule.changed(subscribers: 0, now: Self.at(5))]
        #expect(changes == [.wake(at: Self.at(50)), .updateNow])
        let ended = schedule.settled(Self.at(50))
        #expect(ended)
    }

    @Test("a settle of zero never waits")
    func zeroSettle() {
        var schedule = DNSSDUpdateSchedule(settle: .zero)
        let change = schedule.changed(subscribers: 3, now: Self.at(0))
        #expect(change == .updateNow)
    }
}

import HandoffCore
import HandoffTestSupport
import Testing

@testable import HandoffAgent

/// The agent's shell of ``DNSSDUpdateSchedule``: what reaches its DNS-SD registration, and when,
/// on a manual clock.
@Suite("Agent: DNS-SD gets a new advertisement after the push", .timeLimit(.minutes(1)))
struct DNSSDUpdateTests {
    @Test("no device subscribed: a publish reaches DNS-SD at once")
    func atOnce() async throws {
        let clock = ManualClock()
        let agent = makeAgent(clock: clock)
        _ = try await agent.publish(Sample.activity(1))
        #expect(agent.advertiser.txtRecord == (await agent.advertisedTXTRecord))
        #expect(clock.sleeperCount == 0)
    }

    @Test("a device subscribed: the publish is pushed at once and reaches DNS-SD 50 ms later, with the newest record")
    func afterTheSettle() async throws {
        let clock = ManualClock()
        let agent = makeAgent(clock: clock)
        var records = agent.advertisementFeed.subscribe().makeAsyncIterator()
        let before = await records.next()
        let started = agent.advertiser.txtRecord
        #expect(before?.txtRecord == started)

        _ = try await agent.publish(Sample.activity(1))
        _ = try await agent.publish(Sample.activity(2))
        let newest = await agent.advertisedTXTRecord
        #expect(newest != started)
        #expect(await records.next()?.txtRecord == newest, "pushed at once")
        try await clock.waitForSleepers(count: 1)
        #expect(agent.advertiser.txtRecord == started, "DNS-SD waits while the push goes out")

        clock.advance(by: .milliseconds(49))
        #expect(agent.advertiser.txtRecord == started)
        clock.advance(by: .milliseconds(1))
        var yields = 0
        while agent.advertiser.txtRecord != newest, yields < 100_000 {
            await Task.yield()
            yields += 1
        }
        #expect(agent.advertiser.txtRecord == newest, "the newest record, once, when the wait ends")
        #expect(clock.sleeperCount == 0)
    }
}

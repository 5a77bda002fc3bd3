import Testing

@testable import HandoffAgent

@Suite("AdvertisementFeed: the record pushed to subscribed devices")
struct AdvertisementFeedTests {
    static func record(_ n: UInt8) -> AdvertisementFeed.Record { .init(instanceName: "handoff-a", txtRecord: [1, n]) }

    @Test("a subscriber gets the current record first, then each new one")
    func currentThenNew() async {
        let feed = AdvertisementFeed(current: Self.record(1))
        var records = feed.subscribe().makeAsyncIterator()
        #expect(await records.next() == Self.record(1))
        feed.publish(Self.record(2))
        #expect(await records.next() == Self.record(2))
        #expect(feed.subscriberCount == 1)
    }

    @Test("a subscriber that has not read keeps only the newest record, never a queue")
    func newestOnly() async {
        let feed = AdvertisementFeed(current: Self.record(1))
        let stream = feed.subscribe()
        for n in 2...50 { feed.publish(Self.record(UInt8(n))) }
        var records = stream.makeAsyncIterator()
        #expect(await records.next() == Self.record(50))
    }

    @Test("a subscriber that stops is forgotten")
    func forgotten() async {
        let feed = AdvertisementFeed(current: Self.record(1))
        let task = Task { for await _ in feed.subscribe() {} }
        while feed.subscriberCount == 0 { await Task.yield() }
        task.cancel()
        await task.value
        #expect(feed.subscriberCount == 0)
    }

    /// A subscriber's task cancelled while a record is published: the stream's termination runs
    /// under the runtime's lock of the cancelled task, and a yield to that task needs the same
    /// lock, so the feed must not take its own lock in the termination (an agent deadlocked when
    /// a peer session ended while an activity was published).
    @Test("subscribers cancelled while records are published: no deadlock", .timeLimit(.minutes(1)))
    func cancelledWhilePublishing() async {
        let feed = AdvertisementFeed(current: Self.record(0))
        let publishing = Task.detached {
            var n: UInt8 = 0
            while !Task.isCancelled {
                n &+= 1
                feed.publish(Self.record(n))
            }
        }
        for _ in 0..<2000 {
            let readers = (0..<4).map { _ in Task { for await _ in feed.subscribe() {} } }
            await Task.yield()
            for reader in readers { reader.cancel() }
            for reader in readers { await reader.value }
        }
        publishing.cancel()
        await publishing.value
        #expect(feed.subscriberCount == 0)
    }
}

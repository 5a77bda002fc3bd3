import Foundation
import HandoffCore
import Testing

@testable import HandoffAgent

@Suite("AgentEventHub: events to every watcher")
struct AgentEventHubTests {
    let event = AgentEvent(.paused, at: Date(timeIntervalSince1970: 0))

    @Test("every subscriber gets every event in order; unsubscribing ends its sequence")
    func fanOut() async {
        let hub = AgentEventHub()
        let one = hub.subscribe(), two = hub.subscribe()
        hub.publish([event, AgentEvent(.resumed, at: event.time)])
        hub.unsubscribe(one.id)
        hub.unsubscribe(two.id)
        var names: [[String]] = []
        for subscription in [one, two] {
            var seen: [String] = []
            for await e in subscription.events { seen.append(e.name) }
            names.append(seen)
        }
        #expect(names == [["paused", "resumed"], ["paused", "resumed"]])
        #expect(hub.count == 0)
    }

    @Test("background subscribers (the desktop notifications) get each event after the watchers")
    func backgroundLast() async {
        let hub = AgentEventHub()
        let background = hub.subscribe(background: true)
        let watchers = [hub.subscribe(), hub.subscribe()]
        let later = hub.subscribe(background: true)
        let order = hub.deliveryOrder
        #expect(Set(order.prefix(2)) == Set(watchers.map(\.id)))
        #expect(Set(order.suffix(2)) == [background.id, later.id])
        hub.publish([event])
        for subscription in watchers + [background, later] {
            hub.unsubscribe(subscription.id)
            var seen: [String] = []
            for await e in subscription.events { seen.append(e.name) }
            #expect(seen == ["paused"])
        }
    }

    @Test("a subscriber that falls bufferSize events behind is dropped, and knows it")
    func overflow() async {
        let hub = AgentEventHub()
        let slow = hub.subscribe()
        hub.publish(Array(repeating: event, count: AgentEventHub.bufferSize + 1))
        var count = 0
        for await _ in slow.events { count += 1 }
        #expect(count == AgentEventHub.bufferSize)
        #expect(slow.overflowed)
        #expect(hub.count == 0)
    }
}

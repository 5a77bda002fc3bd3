// Which browsed instances are followed when more are published than the browser follows: junk
// instances must not hide the ones the agent can read.
import Testing
@testable import HandoffDiscovery

@Suite("Instance slots: unreadable instances cannot crowd out readable ones")
struct InstanceSlotsTests {
    typealias Slots = InstanceSlots<ContinuousClock.Instant>
    let start = ContinuousClock.now
    /// The browser's table: `ServiceBrowser.maximumInstances`.
    let capacity = Slots.Limits().capacity

    /// Slots full of `count` junk instances activated at `start`, one of them reported resolved.
    func full(_ count: Int? = nil) -> Slots {
        var slots = Slots()
        for i in 0..<(count ?? capacity) { #expect(slots.appeared("junk-\(i)", now: start) == [.activate("junk-\(i)")]) }
        slots.reported("junk-0")
        return slots
    }

    @Test("a newcomer takes the place of an instance never resolved before one resolved and unreadable")
    func evictionOrder() {
        var slots = full()
        let later = start + .seconds(10)
        let changes = slots.appeared("restarted-peer", now: later)
        #expect(changes.contains(.activate("restarted-peer")))
        guard case .park(let victim) = changes.first else {
            Issue.record("no instance made room: \(changes)")
            return
        }
        #expect(victim != "junk-0", "a resolved instance went before unresolved ones")
        #expect(slots.isActive("restarted-peer") && slots.activeCount == capacity && slots.waiting == [victim])
        // With only resolved, unreadable instances left to displace, they go too.
        var resolvedOnly = Slots(limits: .init(capacity: 2))
        _ = resolvedOnly.appeared("a", now: start)
        _ = resolvedOnly.appeared("b", now: start + .seconds(1))
        resolvedOnly.reported("a")
        resolvedOnly.reported("b")
        #expect(resolvedOnly.appeared("c", now: later).first == .park("a"))
    }

    @Test("pinned (readable) instances are never displaced; a newcomer waits when only they are left")
    func pinnedStay() {
        var slots = Slots(limits: .init(capacity: 3))
        for name in ["peer-1", "peer-2", "junk"] { _ = slots.appeared(name, now: start) }
        _ = slots.pin(["peer-1", "peer-2"], now: start)
        let later = start + .seconds(60)
        #expect(slots.appeared("junk-2", now: later) == [.park("junk"), .activate("junk-2")])
        // junk-2 has not had its turn yet and the peers are pinned: the next one waits.
        #expect(slots.appeared("junk-3", now: later) == [])
        #expect(slots.waiting == ["junk", "junk-3"])
        for _ in 0..<10 {
            for change in slots.rotate(now: later + .seconds(100)) {
                #expect(change != .park("peer-1") && change != .park("peer-2"))
            }
        }
        #expect(slots.isActive("peer-1") && slots.isActive("peer-2"))
    }

    @Test("an instance still in its first turn is not displaced, so it can be resolved and read")
    func minimumTurn() {
        var slots = full()
        #expect(slots.appeared("a", now: start + .seconds(1)) == [])
        #expect(slots.waiting == ["a"])
        // Its turn comes when the others have had theirs.
        let changes = slots.rotate(now: start + .seconds(5))
        #expect(changes.contains(.activate("a")))
        #expect(!slots.rotate(now: start + .seconds(9)).contains(.park("a")), "a keeps its place for its whole turn")
    }

    @Test("with 1000 junk instances waiting, a readable newcomer is followed within 1000 ÷ capacity + 1 turns and then stays")
    func boundedWaitUnderFlood() {
        var slots = full()
        var now = start
        for i in capacity..<(capacity + 1000) { _ = slots.appeared("junk-\(i)", now: now) }
        _ = slots.appeared("peer", now: now)
        var turns = 0
        while !slots.isActive("peer") {
            now += .seconds(5)
            _ = slots.rotate(now: now)
            turns += 1
            #expect(slots.activeCount == capacity && slots.waiting.count <= 1024)
        }
        #expect(turns <= 1000 / capacity + 1, "waited \(turns) turns")
        _ = slots.pin(["peer"], now: now)
        for _ in 0..<50 {
            now += .seconds(5)
            _ = slots.rotate(now: now)
        }
        #expect(slots.isActive("peer"))
    }

    @Test("a freed place goes to the first waiting instance; waiting ones that leave are forgotten")
    func departures() {
        var slots = full(2)
        var small = Slots(limits: .init(capacity: 1, waitingCapacity: 2))
        _ = small.appeared("a", now: start)
        #expect(small.appeared("b", now: start) == [])
        #expect(small.appeared("c", now: start) == [])
        #expect(small.appeared("d", now: start) == [.drop("b")], "the oldest waiting one is forgotten past the cap")
        #expect(small.disappeared("c", now: start) == [])
        #expect(small.disappeared("a", now: start) == [.activate("d")])
        #expect(small.waiting.isEmpty)
        #expect(slots.disappeared("junk-0", now: start) == [])
        #expect(slots.appeared("junk-0", now: start) == [.activate("junk-0")])
    }

    @Test("an instance named before it appears (its peer pushed it) takes a place at once when the table is full, even from instances in their first turn")
    func pinnedNewcomer() {
        var slots = full()
        _ = slots.pin(["pushed-peer"], now: start)
        let changes = slots.appeared("pushed-peer", now: start + .milliseconds(10))
        #expect(changes.count == 2 && changes.last == .activate("pushed-peer"), "\(changes)")
        guard case .park(let victim) = changes.first else {
            Issue.record("no instance made room: \(changes)")
            return
        }
        #expect(victim != "junk-0", "a resolved instance went before unresolved ones")
        #expect(slots.isActive("pushed-peer") && slots.activeCount == capacity && slots.waiting == [victim])
    }

    @Test("an instance waiting for its turn when it is pinned is followed at once; pinned instances are never displaced for it")
    func pinnedWhileWaiting() {
        var slots = Slots(limits: .init(capacity: 2))
        _ = slots.appeared("peer-1", now: start)
        _ = slots.appeared("junk", now: start)
        _ = slots.pin(["peer-1"], now: start)
        #expect(slots.appeared("peer-2", now: start + .seconds(1)) == [], "peer-2 is not known readable yet: it waits")
        #expect(slots.pin(["peer-1", "peer-2"], now: start + .seconds(2)) == [.park("junk"), .activate("peer-2")])
        #expect(slots.waiting == ["junk"])
        #expect(slots.appeared("peer-3", now: start + .seconds(3)) == [])
        #expect(slots.pin(["peer-1", "peer-2", "peer-3"], now: start + .seconds(4)) == [], "only pinned instances are left to displace")
        #expect(slots.isActive("peer-1") && slots.isActive("peer-2") && slots.waiting == ["junk", "peer-3"])
    }
}

import Foundation
import HandoffCore
import Testing

@testable import HandoffAgent

@Suite("OfferWatch: what the paired devices offer, as events")
struct OfferWatchTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let a = UUID(), b = UUID(), c = UUID()

    func offer(_ id: UUID, _ peer: String, _ title: String? = nil) -> OfferedActivity {
        OfferedActivity(id: id, peer: peer, activityType: "com.example.edit", title: title)
    }

    @Test("a peer arrives with an activity: peerReachable, then activityOffered stamped with the time")
    func arrival() {
        var watch = OfferWatch()
        let events = watch.observe(offered: [offer(a, "h1", "Notes")], reachablePeers: ["h1"], at: t0)
        var stamped = offer(a, "h1", "Notes")
        stamped.offeredAt = t0
        #expect(events == [AgentEvent(.peerReachable(peer: "h1"), at: t0), AgentEvent(.activityOffered(stamped), at: t0)])
        #expect(watch.current == [stamped])
    }

    @Test("nothing changed: no events, and the first sighting's time is kept (a new title is taken)")
    func unchanged() {
        var watch = OfferWatch()
        _ = watch.observe(offered: [offer(a, "h1", "Notes")], reachablePeers: ["h1"], at: t0)
        #expect(watch.observe(offered: [offer(a, "h1", "Notes 2")], reachablePeers: ["h1"], at: t0 + 60).isEmpty)
        #expect(watch.current.first?.offeredAt == t0)
        #expect(watch.current.first?.title == "Notes 2")
    }

    @Test("a newer activity from the same peer: the old one withdrawn first, then the new one offered")
    func replaced() {
        var watch = OfferWatch()
        _ = watch.observe(offered: [offer(a, "h1")], reachablePeers: ["h1"], at: t0)
        let events = watch.observe(offered: [offer(b, "h1")], reachablePeers: ["h1"], at: t0 + 5)
        #expect(events.map(\.name) == ["activityWithdrawn", "activityOffered"])
        #expect(events.first?.kind == .activityWithdrawn(id: a, peer: "h1"))
        #expect(events.last?.activityID == b)
    }

    @Test("a peer becomes unreachable: its activities withdrawn, then peerUnreachable; back again: reachable, then offered anew")
    func unreachable() {
        var watch = OfferWatch()
        _ = watch.observe(offered: [offer(a, "h1"), offer(c, "h3")], reachablePeers: ["h1", "h3"], at: t0)
        let gone = watch.observe(offered: [offer(c, "h3")], reachablePeers: ["h3"], at: t0 + 1)
        #expect(gone == [AgentEvent(.activityWithdrawn(id: a, peer: "h1"), at: t0 + 1), AgentEvent(.peerUnreachable(peer: "h1"), at: t0 + 1)])
        let back = watch.observe(offered: [offer(a, "h1"), offer(c, "h3")], reachablePeers: ["h1", "h3"], at: t0 + 9)
        #expect(back.map(\.name) == ["peerReachable", "activityOffered"])
        #expect(watch.current.map(\.id) == [a, c], "newest first: a was offered again at t0 + 9")
        #expect(watch.current.first?.offeredAt == t0 + 9)
    }

    @Test("current is newest first, ties by peer")
    func order() {
        var watch = OfferWatch()
        _ = watch.observe(offered: [offer(a, "h2")], reachablePeers: ["h2"], at: t0)
        _ = watch.observe(offered: [offer(a, "h2"), offer(b, "h1"), offer(c, "h3")], reachablePeers: ["h1", "h2", "h3"], at: t0 + 1)
        #expect(watch.current.map(\.id) == [b, c, a])
    }
}

import Foundation
import HandoffCore
import Testing

@Suite("OfferSelection: which activity `handoff continue` means")
struct OfferSelectionTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func offer(_ id: String, _ peer: String, at seconds: Double) -> OfferedActivity {
        OfferedActivity(id: UUID(uuidString: id)!, peer: peer, activityType: "com.example.edit", title: "T", offeredAt: t0 + seconds)
    }

    var offered: [OfferedActivity] {
        [offer("AAAA1111-0000-0000-0000-000000000001", "h1", at: 10),
         offer("AAAA2222-0000-0000-0000-000000000002", "h2", at: 30),
         offer("BBBB0000-0000-0000-0000-000000000003", "h1", at: 20)]
    }

    @Test("no ID: the newest on offer; --from: the newest from that device")
    func newest() throws {
        #expect(try OfferSelection.select(prefix: nil, from: nil, in: offered).get().peer == "h2")
        #expect(try OfferSelection.select(prefix: nil, from: "h1", in: offered).get().id.uuidString.hasPrefix("BBBB"))
        #expect(OfferSelection.select(prefix: nil, from: "h9", in: offered) == .failure(.nothingOffered(from: "h9")))
        #expect(OfferSelection.select(prefix: nil, from: nil, in: []) == .failure(.nothingOffered(from: nil)))
    }

    @Test("a unique prefix, in either case, with or without dashes as in the ID")
    func prefix() throws {
        #expect(try OfferSelection.select(prefix: "bbbb", from: nil, in: offered).get().peer == "h1")
        #expect(try OfferSelection.select(prefix: "AAAA1", from: nil, in: offered).get().id.uuidString.hasPrefix("AAAA1111"))
        #expect(try OfferSelection.select(prefix: "aaaa2222-0000", from: nil, in: offered).get().peer == "h2")
    }

    @Test("an ambiguous prefix lists the candidates, newest first, and is a usage error")
    func ambiguous() throws {
        let result = OfferSelection.select(prefix: "aaaa", from: nil, in: offered)
        guard case .failure(.ambiguous(_, let candidates)) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(candidates.map(\.peer) == ["h2", "h1"])
        #expect(OfferSelection.Problem.ambiguous(prefix: "aaaa", candidates: candidates).isUsageError)
        #expect(OfferSelection.Problem.ambiguous(prefix: "aaaa", candidates: candidates).description.contains("aaaa2222-0000-0000-0000-000000000002"))
        // --from narrows it down.
        #expect(try OfferSelection.select(prefix: "aaaa", from: "h1", in: offered).get().peer == "h1")
    }

    @Test("too short, or not hexadecimal: a usage error; no match: not one")
    func invalid() {
        #expect(OfferSelection.select(prefix: "aaa", from: nil, in: offered) == .failure(.invalidPrefix("aaa")))
        #expect(OfferSelection.select(prefix: "zzzz", from: nil, in: offered) == .failure(.invalidPrefix("zzzz")))
        #expect(OfferSelection.Problem.invalidPrefix("x").isUsageError)
        #expect(OfferSelection.select(prefix: "cccc", from: nil, in: offered) == .failure(.noMatch(prefix: "cccc", from: nil)))
        #expect(!OfferSelection.Problem.noMatch(prefix: "cccc", from: nil).isUsageError)
    }

    @Test("short IDs are 8 characters, longer where two IDs share them")
    func shortIDs() {
        let ids = OfferSelection.shortIDs(offered)
        #expect(ids[UUID(uuidString: "BBBB0000-0000-0000-0000-000000000003")!] == "bbbb0000")
        let twins = [offer("12345678-9000-0000-0000-000000000001", "h1", at: 0), offer("12345678-9100-0000-0000-000000000002", "h1", at: 1)]
        #expect(Set(OfferSelection.shortIDs(twins).values) == ["12345678-90", "12345678-91"])
    }

    @Test("ages read as a person says them")
    func ages() {
        #expect(OfferSelection.age(of: t0, now: t0 + 2) == "just now")
        #expect(OfferSelection.age(of: t0, now: t0 + 42) == "42s ago")
        #expect(OfferSelection.age(of: t0, now: t0 + 180) == "3m ago")
        #expect(OfferSelection.age(of: t0, now: t0 + 7200) == "2h ago")
        #expect(OfferSelection.age(of: nil, now: t0) == "-")
    }
}

@Suite("AgentEvent: the wire form of watch's events")
struct AgentEventTests {
    @Test("every kind survives its JSON form, with time to the millisecond", arguments: [
        AgentEvent.Kind.activityOffered(OfferedActivity(id: UUID(), peer: "h1", activityType: "com.example.edit", title: "Notes")),
        .activityWithdrawn(id: UUID(), peer: "h1"), .peerReachable(peer: "h1"), .peerUnreachable(peer: "h2"),
        .continuing(id: UUID(), peer: "h1", appNotifies: true), .continuing(id: UUID(), peer: "h1", appNotifies: false),
        .continued(id: UUID(), peer: "h1", by: "handler"), .continueFailed(id: UUID(), error: .connectionUnavailable("gone")),
        .paused, .resumed,
    ])
    func roundTrip(kind: AgentEvent.Kind) throws {
        let event = AgentEvent(kind, at: Date(timeIntervalSince1970: 1_800_000_000.125))
        let json = try JSONValue(parsing: event.json.serializedBytes)
        #expect(json["event"]?.stringValue == event.name)
        #expect(json["time"]?.stringValue == "2027-01-15T08:00:00.125Z")
        #expect(AgentEvent(json: json) == event)
        #expect(AppEvent(json: json) == .agent(event), "clients read it among the other events")
    }

    @Test("watch sends every kind but continuing, which only the desktop notifications follow")
    func watched() {
        let now = Date(timeIntervalSince1970: 0)
        #expect(!AgentEvent(.continuing(id: UUID(), peer: "h1", appNotifies: false), at: now).isWatched)
        #expect(AgentEvent(.continued(id: UUID(), peer: "h1", by: "app"), at: now).isWatched)
        #expect(AgentEvent(.paused, at: now).isWatched)
    }

    @Test("an event without the fields it needs is not read")
    func missing() {
        #expect(AgentEvent(json: .object(["event": .string("activityOffered"), "peer": .string("h1")])) == nil)
        #expect(AgentEvent(json: .object(["event": .string("somethingNew")])) == nil)
    }
}

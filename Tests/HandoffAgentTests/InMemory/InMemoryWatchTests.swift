import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import HandoffTrust
import Testing

@testable import HandoffAgent
@testable import HandoffTransport

/// `watch` and `pause` between two whole agents in memory: bravo's watchers (a control client and
/// a HandoffKit app) see alpha's activity offered, continued and withdrawn; alpha's pause withdraws
/// it and refuses fetches. No sockets, no sleeps.
@Suite("Whole agents in memory: watching and pausing", .timeLimit(.minutes(1)))
struct InMemoryWatchTests {
    typealias Hosts = InMemoryContinueTests.Hosts

    /// Reads events until one matches `wanted`; returns those read (the match last), or fails
    /// after `limit` events.
    static func read(_ iterator: inout AgentEventStream.AsyncIterator, until wanted: (AgentEvent) -> Bool,
                     limit: Int = 20) async throws -> [AgentEvent] {
        var seen: [AgentEvent] = []
        while seen.count < limit, let event = try await iterator.next() {
            seen.append(event)
            if wanted(event) { return seen }
        }
        Issue.record("no matching event among \(seen.map(\.name))")
        return seen
    }

    @Test("bravo's watch sees alpha come, its note offered, continued here, then withdrawn: in that order, with the note's fields")
    func watchSeesTheFlow() async throws {
        let hosts = Hosts()
        try await hosts.run { editorApp in
            var events = AgentEventStream { () async throws(HandoffError) in try await hosts.bravo.connectControl() }.makeAsyncIterator()
            #expect(await eventually { hosts.bravo.agent.events.count == 1 }, "the watch is in place")

            let note = try await hosts.publishNote(editorApp)
            let offered = try await Self.read(&events) { if case .activityOffered = $0.kind { true } else { false } }
            #expect(offered.map(\.name) == ["peerReachable", "activityOffered"])
            guard case .activityOffered(let offer)? = offered.last?.kind else { return }
            #expect(offer.id == note.identifier && offer.peer == "alpha" && offer.title == "Shopping list" && offer.activityType == NotesApp.type)
            #expect(offer.offeredAt == offered.last?.time)
            let listed = try #require(await hosts.bravo.agent.offered().first?.offeredAt)
            #expect(abs(listed.timeIntervalSince(offer.offeredAt ?? .distantPast)) < 0.001, "list shows when it was first offered (the wire keeps milliseconds)")

            _ = try await hosts.bravo.agent.continueActivity(id: note.identifier).get()
            let continued = try await Self.read(&events) { if case .continued = $0.kind { true } else { false } }
            #expect(continued.last?.kind == .continued(id: note.identifier, peer: "alpha", by: "app"))

            try await note.resignCurrent()
            await hosts.bravo.discover(hosts.alpha)
            let withdrawn = try await Self.read(&events) { if case .activityWithdrawn = $0.kind { true } else { false } }
            #expect(withdrawn.last?.kind == .activityWithdrawn(id: note.identifier, peer: "alpha"))
        }
    }

    @Test("a continuation that fails is continueFailed with its code")
    func watchSeesFailure() async throws {
        let hosts = Hosts()
        try await hosts.run { editorApp in
            var events = AgentEventStream { () async throws(HandoffError) in try await hosts.bravo.connectControl() }.makeAsyncIterator()
            #expect(await eventually { hosts.bravo.agent.events.count == 1 }, "the watch is in place")
            let note = try await hosts.publishNote(editorApp)
            _ = try await Self.read(&events) { if case .activityOffered = $0.kind { true } else { false } }
            _ = try await hosts.alpha.agent.changeFaults(set: .object(["advertiseGoneData": .bool(true)]), clear: nil).get()
            _ = await hosts.bravo.agent.continueActivity(id: note.identifier)
            let failed = try await Self.read(&events) { if case .continueFailed = $0.kind { true } else { false } }
            guard case .continueFailed(let id, let error)? = failed.last?.kind else { return }
            #expect(id == note.identifier && error.code == .userActivityHandoffFailed)
        }
    }

    @Test("a HandoffKit app gets the same events from agentEvents()")
    func appSeesEvents() async throws {
        let hosts = Hosts()
        try await hosts.run { editorApp in
            let viewerApp = hosts.bravo.app(NotesApp.manifest, delegate: AppRecorder())
            var events = viewerApp.agentEvents().makeAsyncIterator()
            #expect(await eventually { hosts.bravo.agent.events.count == 1 }, "the watch is in place")
            _ = try await hosts.bravo.agent.setPaused(true)
            #expect(try await Self.read(&events) { $0.kind == .paused }.count == 1)
            _ = try await hosts.bravo.agent.setPaused(false)
            let note = try await hosts.publishNote(editorApp)
            let seen = try await Self.read(&events) { if case .activityOffered = $0.kind { true } else { false } }
            #expect(seen.last?.activityID == note.identifier)
        }
    }

    @Test("pause on alpha: its advertisement offers nothing (bravo sees the note withdrawn), fetches are refused; resume offers it again")
    func pause() async throws {
        let hosts = Hosts()
        try await hosts.run { editorApp in
            let note = try await hosts.publishNote(editorApp)
            #expect(await hosts.bravo.agent.offered().map(\.id) == [note.identifier])

            #expect(try await hosts.alpha.agent.setPaused(true) == PauseResult(paused: true, changed: true))
            #expect(try await hosts.alpha.agent.setPaused(true) == PauseResult(paused: true, changed: false))
            #expect(await hosts.alpha.agent.status().paused)
            // A peer that still knows the ID is refused.
            let refused = await hosts.bravo.agent.continueActivity(id: note.identifier)
            #expect(refused.error?.code == .userActivityHandoffFailed)
            #expect(refused.error?.message.contains("paused") == true, "\(refused)")
            await hosts.bravo.discover(hosts.alpha)
            #expect(await hosts.bravo.agent.offered().isEmpty)

            _ = try await hosts.alpha.agent.setPaused(false)
            await hosts.bravo.discover(hosts.alpha)
            #expect(await hosts.bravo.agent.offered().map(\.id) == [note.identifier])
            #expect(try await hosts.bravo.agent.continueActivity(id: note.identifier).get().by == "app")
        }
    }
}

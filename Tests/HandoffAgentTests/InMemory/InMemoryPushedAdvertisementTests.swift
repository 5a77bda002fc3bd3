import Foundation
import HandoffCore
import HandoffDiscovery
import HandoffKit
import HandoffTestSupport
import HandoffTransport
import HandoffTrust
import Synchronization
import Testing

@testable import HandoffAgent

/// Issue 21: bravo's liveness connection to alpha subscribes to alpha's advertisement although
/// DNS-SD shows alpha, so alpha's changes reach bravo's list and watch in one frame; DNS-SD,
/// slower, brings the same records later, and must neither repeat nor roll back what was pushed.
/// In memory, bravo's liveness on its manual clock; what DNS-SD would deliver, the test delivers.
@Suite("Whole agents in memory: advertisements pushed to a peer DNS-SD shows", .timeLimit(.minutes(1)))
struct InMemoryPushedAdvertisementTests {
    typealias Hosts = InMemoryContinueTests.Hosts

    static func isOffered(_ event: AgentEvent) -> Bool { if case .activityOffered = event.kind { true } else { false } }
    static func isWithdrawn(_ event: AgentEvent) -> Bool { if case .activityWithdrawn = event.kind { true } else { false } }

    static func subscribed(_ hosts: Hosts) async throws -> Bool {
        try await InMemoryLivenessLinkTests.tick(hosts) { hosts.alpha.agent.advertisementFeed.subscriberCount == 1 }
    }

    static func note(_ title: String, _ editorApp: HandoffApplication) async throws -> UserActivity {
        let note = UserActivity(activityType: NotesApp.type, application: editorApp)
        note.title = title
        try await note.becomeCurrent()
        return note
    }

    @Test("alpha's new note and its withdrawal reach bravo's list and watch pushed, with no news from DNS-SD; the same record by DNS-SD after is no event, and an older one changes nothing")
    func pushedChangesOnce() async throws {
        let hosts = Hosts()
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { editorApp in
            let bravo = hosts.bravo.agent
            var events = AgentEventStream { () async throws(HandoffError) in try await hosts.bravo.connectControl() }.makeAsyncIterator()
            #expect(await eventually { bravo.events.count == 1 }, "the watch is in place")
            let first = try await hosts.publishNote(editorApp)  // DNS-SD shows alpha
            _ = try await InMemoryWatchTests.read(&events, until: Self.isOffered)
            #expect(try await Self.subscribed(hosts))

            // Alpha holds one note at a time here (resigning the current one would make the one
            // before current again).
            try await first.resignCurrent()
            let gone = try await InMemoryWatchTests.read(&events, until: Self.isWithdrawn)
            #expect(gone.map(\.kind) == [.activityWithdrawn(id: first.identifier, peer: "alpha")])
            #expect(await bravo.offered().isEmpty, "pushed: no DNS-SD resolve since the first note")
            let second = try await Self.note("Packing list", editorApp)
            let offered = try await InMemoryWatchTests.read(&events, until: Self.isOffered)
            #expect(offered.map(\.name) == ["activityOffered"])
            #expect(await bravo.offered().map(\.id) == [second.identifier])
            let secondRecord = await hosts.alpha.agent.advertisedTXTRecord
            await hosts.bravo.discover(hosts.alpha)  // DNS-SD catches up with the same record

            try await second.resignCurrent()
            let withdrawn = try await InMemoryWatchTests.read(&events, until: Self.isWithdrawn)
            #expect(withdrawn.map(\.kind) == [.activityWithdrawn(id: second.identifier, peer: "alpha")], "no second offer from DNS-SD's same record")
            let left = await bravo.offered()
            #expect(left.isEmpty, "withdrawn at once: \(left)")

            // DNS-SD, late, brings the record before the withdrawal: it stays withdrawn.
            await bravo.handle(.resolved(InMemoryHost.service(of: hosts.alpha, txtRecord: secondRecord)))
            #expect(await bravo.offered().isEmpty)
            let third = try await Self.note("Recipes", editorApp)
            let next = try await InMemoryWatchTests.read(&events, until: Self.isOffered)
            #expect(next.count == 1, "nothing between the withdrawal and the next offer: \(next.map(\.name))")
            #expect(await bravo.offered().map(\.id) == [third.identifier])
            #expect(await bravo.peers().map(\.via) == ["dns-sd"])
            #expect(hosts.alpha.listener.acceptedCount == 1, "all of it on the one liveness connection")
        }
    }

    @Test("a DNS-SD goodbye for alpha while it answers and pushes: its note stays, and its pushed withdrawal and next note show at once")
    func goodbyeWhilePushing() async throws {
        let hosts = Hosts()
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { editorApp in
            let bravo = hosts.bravo.agent
            let note = try await hosts.publishNote(editorApp)
            #expect(try await Self.subscribed(hosts))
            await bravo.handle(.removed(instanceName: hosts.alpha.agent.instanceName))
            #expect(await bravo.offered().map(\.id) == [note.identifier], "kept: alpha answers")
            try await note.resignCurrent()
            #expect(await eventually { await bravo.offered().isEmpty })
            let next = try await Self.note("Packing list", editorApp)
            #expect(await eventually { await bravo.offered().map(\.id) == [next.identifier] })
        }
    }

    @Test("a device known by address that DNS-SD then shows: the subscribed connection stays (no second handshake), and its pushes still arrive")
    func addressToDNSSDKeepsTheConnection() async throws {
        let hosts = Hosts(alphaAddresses: [PeerAddress(host: "10.0.0.1", port: 7000)])
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { editorApp in
            let bravo = hosts.bravo.agent
            let note = try await hosts.publishNote(editorApp, discover: false)
            #expect(try await InMemoryLivenessLinkTests.tick(hosts) { await bravo.offered().map(\.id) == [note.identifier] })
            #expect(await bravo.peers().map(\.via) == ["address"])
            let accepted = hosts.alpha.listener.acceptedCount
            await hosts.bravo.discover(hosts.alpha)
            #expect(try await InMemoryLivenessLinkTests.tick(hosts) { await bravo.livenessTargets().values.map(\.subscribes) == [false] })
            for _ in 0..<10 { try await InMemoryLivenessLinkTests.step(hosts) }
            #expect(hosts.alpha.listener.acceptedCount == accepted, "no reconnect for the change of route")
            #expect(await bravo.peers().map(\.via) == ["dns-sd"])
            let next = try await Self.note("Packing list", editorApp)
            #expect(await eventually { await bravo.offered().map(\.id) == [next.identifier] }, "pushed on the connection kept")
            #expect(await bravo.peers().first?.reachable == true)
        }
    }

    @Test("DNS-SD no longer shows a device with stored addresses while its subscribed connection is open: the connection stays, and what it pushed last lists the device by address at once")
    func dnsSDToAddressKeepsTheConnection() async throws {
        let hosts = Hosts(alphaAddresses: [PeerAddress(host: "10.0.0.1", port: 7000)])
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { editorApp in
            let bravo = hosts.bravo.agent
            let alpha = hosts.alpha.identity.deviceID
            let note = try await hosts.publishNote(editorApp)  // DNS-SD shows alpha
            #expect(try await Self.subscribed(hosts))
            let accepted = hosts.alpha.listener.acceptedCount
            // The goodbye is honoured only for a device found unreachable (said here, as liveness
            // would a moment before its connection closes).
            await bravo.setReachability(alpha, reachable: false, lastHeard: nil)
            await bravo.handle(.removed(instanceName: hosts.alpha.agent.instanceName))
            #expect(try await InMemoryLivenessLinkTests.tick(hosts) { await bravo.peers().map(\.via) == ["address"] })
            #expect(await bravo.livenessTargets().values.map(\.subscribes) == [true])
            #expect(hosts.alpha.listener.acceptedCount == accepted, "no reconnect for the change of route")
            await bravo.setReachability(alpha, reachable: true, lastHeard: nil)
            #expect(await bravo.offered().map(\.id) == [note.identifier])
        }
    }

    @Test("an old peer (its hello says nothing of pushing): one DNS-SD shows is not subscribed to, as before")
    func oldPeerNotSubscribed() async throws {
        let hosts = Hosts(bravoMultiplexes: false)
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts) { editorApp in
            let note = try await hosts.publishNote(editorApp)
            #expect(try await InMemoryLivenessLinkTests.tick(hosts) { hosts.alpha.listener.acceptedCount == 1 }, "liveness connected")
            for _ in 0..<5 { try await InMemoryLivenessLinkTests.step(hosts) }
            #expect(hosts.alpha.agent.advertisementFeed.subscriberCount == 0)
            #expect(await hosts.bravo.agent.offered().map(\.id) == [note.identifier])
            #expect(await hosts.bravo.agent.peers().first?.reachable == true)
        }
    }

    @Test("the connection drops and alpha answers no more: what it pushed is not offered as current; DNS-SD's newer record is taken, and offered once alpha answers")
    func dropFallsBackToDNSSD() async throws {
        let hosts = Hosts()
        let connector = SeveringConnector(hosts.bravo.transport)
        try await InMemoryAddressedPeerTests.runWithLiveness(hosts, connector: connector) { editorApp in
            let bravo = hosts.bravo.agent
            _ = try await hosts.publishNote(editorApp)
            #expect(try await Self.subscribed(hosts))
            let pushed = try await Self.note("Packing list", editorApp)
            #expect(await eventually { await bravo.offered().map(\.id) == [pushed.identifier] })

            connector.refusing = true
            await connector.opened.last?.close()
            #expect(try await InMemoryLivenessLinkTests.tick(hosts) { await bravo.peers().first?.reachable == false })
            #expect(await bravo.offered().isEmpty, "not offered as current once the connection is gone")

            let later = try await Self.note("Recipes", editorApp)
            await hosts.bravo.discover(hosts.alpha)  // nothing pushes now: DNS-SD brings it
            #expect(await bravo.peers().first?.reachable == false)
            connector.refusing = false
            #expect(try await InMemoryLivenessLinkTests.tick(hosts) { await bravo.offered().map(\.id) == [later.identifier] })
        }
    }
}

/// Liveness connections through `base`, refused while ``refusing`` (the peer's host gone).
final class SeveringConnector: PeerConnector {
    let opened: OpenedConnections
    private let refuses = Mutex(false)

    init(_ base: any PeerConnector) { opened = OpenedConnections(base) }

    var refusing: Bool {
        get { refuses.withLock { $0 } }
        set { refuses.withLock { $0 = newValue } }
    }

    struct Refused: Error {}

    func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        guard !refusing else { throw Refused() }
        return try await opened.connect(to: endpoint, limits: limits)
    }
}

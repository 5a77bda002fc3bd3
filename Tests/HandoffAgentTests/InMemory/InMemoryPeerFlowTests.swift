import Foundation
import HandoffCore
import HandoffKit
import HandoffTestSupport
import HandoffTransport
import HandoffTrust
import Synchronization
import Testing

@testable import HandoffAgent

/// Whole agents in one process over the in-memory transport: pairing, learning an advertising
/// key, liveness and `open`, each through the agent's one ``PeerTransport``. No sockets.
@Suite("Whole agents in memory: pairing, keys, liveness, open", .timeLimit(.minutes(1)))
struct InMemoryPeerFlowTests {
    /// A person at a host's CLI who runs `request` and accepts the pairing code shown.
    static func confirmingPerson(_ host: InMemoryHost, _ request: ControlRequest) async throws -> Result<JSONValue, HandoffError> {
        let channel = ControlChannel(connection: try await host.connectControl())
        return await withTaskGroup(of: Result<JSONValue, HandoffError>?.self) { group in
            group.addTask { await channel.readFrames(); return nil }
            group.addTask {
                for await (event, replyID) in channel.events {
                    if case .pairCode? = event, let replyID { await channel.reply(to: replyID, AppReply(accept: true)) }
                }
                return nil
            }
            let result = await channel.request(request)
            await channel.close()
            group.cancelAll()
            return result
        }
    }

    @Test("alpha accepts pairing, charlie pairs with it by address: each then trusts the other")
    func pairing() async throws {
        let network = InMemoryNetwork()
        let alpha = InMemoryHost("alpha", host: "10.0.0.1", network: network)
        let charlie = InMemoryHost("charlie", host: "10.0.0.3", network: network)
        try await InMemoryLab.run([alpha, charlie]) {
            async let accepted = Self.confirmingPerson(alpha, .pair(.accept))
            #expect(await eventually { await alpha.agent.pairingWindow != nil })
            let paired = try await Self.confirmingPerson(charlie, .pair(.peer("10.0.0.1:7000")))
            #expect(paired.error == nil, "\(paired)")
            #expect(try await accepted.error == nil)
            #expect(await alpha.agent.trust.isPaired(charlie.identity.deviceID))
            #expect(await charlie.agent.trust.isPaired(alpha.identity.deviceID))
        }
    }

    @Test("alpha's pairing window: a second `pair --accept` is refused while it is open; it closes at pairingTimeout on alpha's clock with 4610")
    func pairingWindow() async throws {
        let network = InMemoryNetwork()
        let alpha = InMemoryHost("alpha", host: "10.0.0.1", network: network)
        let timeout = alpha.agent.configuration.security.pairingTimeout
        try await InMemoryLab.run([alpha]) {
            async let first = Self.confirmingPerson(alpha, .pair(.accept))
            #expect(await eventually { await alpha.agent.pairingWindow != nil })
            let second = try await Self.confirmingPerson(alpha, .pair(.accept))
            #expect(second.error?.message == "alpha is already accepting a pairing; finish or cancel that one first")
            #expect(await alpha.agent.pairingWindow != nil, "the first window stays open")
            let closesAt = ManualClock.Instant.zero.advanced(by: timeout)
            try await alpha.clock.waitForSleeper(until: closesAt)
            alpha.clock.advance(by: timeout - .nanoseconds(1))
            for _ in 0..<1_000 { await Task.yield() }
            #expect(await alpha.agent.pairingWindow != nil, "still open one nanosecond before")
            alpha.clock.advance(by: .nanoseconds(1))
            let error = try await first.error
            #expect(error?.code.rawValue == 4610)
            #expect(error?.message == "no device completed pairing within \(timeout); nothing was stored")
            #expect(await alpha.agent.pairingWindow == nil)
        }
    }

    @Test("bravo, paired with alpha but without its advertising key, learns it over an unpinned connection and lists alpha's activity")
    func keyExchange() async throws {
        let network = InMemoryNetwork()
        let keys = (alpha: AdvertisingKey.random(), bravo: AdvertisingKey.random())
        let alpha = InMemoryHost("alpha", host: "10.0.0.1", network: network, paired: [InMemoryHost.device("bravo", advertisingKey: nil)],
                                 advertisingKey: keys.alpha)
        let bravo = InMemoryHost("bravo", host: "10.0.0.2", network: network, paired: [InMemoryHost.device("alpha", advertisingKey: nil)],
                                 advertisingKey: keys.bravo)
        try await InMemoryLab.run([alpha, bravo]) {
            let id = try await alpha.agent.publish(Sample.activity(1, title: "Notes"))
            await bravo.discover(alpha)
            #expect(await eventually { await bravo.agent.offered().map(\.id) == [id] })
            #expect(await bravo.agent.trust.device(alpha.identity.deviceID)?.advertisingKey == keys.alpha)
        }
    }

    @Test("bravo's liveness probes reach alpha; once alpha's host goes away, alpha becomes unreachable and offers nothing")
    func liveness() async throws {
        let network = InMemoryNetwork()
        let (alpha, bravo) = InMemoryHost.pairedAlphaAndBravo(on: network)
        let timing = PeerLiveness<DeviceID, ManualClock.Instant>.Timing(interval: .seconds(1), timeout: .seconds(2))
        let probes = ProbeCounter(bravo.transport)
        let service = LivenessService(agent: bravo.agent, connector: probes, clock: bravo.clock, timing: timing, logger: quietLogger)
        try await InMemoryLab.run([alpha, bravo]) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await service.run() }
                defer { group.cancelAll() }
                _ = try await alpha.agent.publish(Sample.activity(1, title: "Notes"))
                await bravo.discover(alpha)
                func reachable() async -> Bool? { await bravo.agent.peers().first?.reachable }
                // Ten seconds of probes while alpha answers: it stays reachable. Time moves on only
                // once every ping sent has its pong back.
                for _ in 0..<Int(Duration.seconds(10) / timing.tickInterval) {
                    try await bravo.clock.waitForSleepers(count: 1)
                    bravo.clock.advance(by: timing.tickInterval)
                    #expect(await eventually { probes.allAnswered })
                    for _ in 0..<50 { await Task.yield() }
                }
                #expect(probes.pongs.load(ordering: .relaxed) >= 5)
                #expect(await reachable() == true)
                network.takeDown(host: "10.0.0.1", port: 7000)
                var ticks = 0
                while await reachable() != false, ticks < 400 {
                    try await bravo.clock.waitForSleepers(count: 1)
                    bravo.clock.advance(by: timing.tickInterval)
                    for _ in 0..<50 { await Task.yield() }
                    ticks += 1
                }
                #expect(await reachable() == false)
                #expect(await bravo.agent.offered().isEmpty, "an unreachable peer offers nothing")
            }
        }
    }

    @Test("bravo opens a URL, then sends a file, in alpha's notes app: the app gets both")
    func open() async throws {
        let network = InMemoryNetwork()
        let inbox = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-inmemory-inbox-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: inbox) }
        let (alpha, bravo) = InMemoryHost.pairedAlphaAndBravo(on: network) { $0.inboxDirectory = inbox }
        let notes = AppRecorder()
        let notesApp = alpha.app(NotesApp.manifest, delegate: notes)
        try await InMemoryLab.run([alpha, bravo]) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await notesApp.run() }
                defer { group.cancelAll() }
                try await notesApp.waitUntilConnected()
                await bravo.discover(alpha)
                let url = URL(string: "https://example.com/notes/42")!
                let opened = await bravo.agent.open(OpenRequest(bundleID: NotesApp.manifest.identity.bundleID, url: url), file: [], onPeer: "alpha")
                #expect(opened.error == nil, "\(opened)")
                #expect(opened.value?.handled == true)
                #expect(notes.events == [.opened(url, sourceApplication: nil)])

                // Three data frames' worth: the transfer streams, and the receiver writes it whole.
                let file = (0..<150_000).map { UInt8(truncatingIfNeeded: $0) }
                let sent = await bravo.agent.open(
                    OpenRequest(bundleID: NotesApp.manifest.identity.bundleID, fileName: "list.txt", fileSize: file.count), file: file, onPeer: "alpha")
                #expect(sent.value?.handled == true, "\(sent)")
                guard case .opened(let fileURL, _)? = notes.events.last else { Issue.record("no file opened: \(notes.events)"); return }
                #expect(fileURL.isFileURL)
                #expect(Array(try Data(contentsOf: fileURL)) == file)
            }
        }
    }
}

/// Liveness probes through `base`, counted: pings sent and pongs received.
final class ProbeCounter: PeerConnector {
    let base: any PeerConnector
    let pings = Atomic<Int>(0)
    let pongs = Atomic<Int>(0)

    init(_ base: any PeerConnector) { self.base = base }

    /// Whether every ping sent so far has had its pong.
    var allAnswered: Bool { pongs.load(ordering: .acquiring) >= pings.load(ordering: .acquiring) }

    func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        Counted(base: try await base.connect(to: endpoint, limits: limits), counter: self)
    }

    struct Counted: FrameConnection {
        let base: any FrameConnection
        let counter: ProbeCounter

        func send(_ frames: [Frame]) async throws {
            try await base.send(frames)
            counter.pings.add(frames.filter { $0.kind == .ping }.count, ordering: .releasing)
        }

        func receive() async throws -> Frame? {
            let frame = try await base.receive()
            if frame?.kind == .pong { counter.pongs.add(1, ordering: .releasing) }
            return frame
        }

        func close() async { await base.close() }
    }
}

extension Result {
    var value: Success? { if case .success(let v) = self { v } else { nil } }
}

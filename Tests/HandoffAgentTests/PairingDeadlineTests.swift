import Foundation
import HandoffCore
import HandoffTestSupport
import HandoffTransport
import HandoffTrust
import Synchronization
import Testing

@testable import HandoffAgent

/// The pairing deadline (`security.pairingTimeout`) on the agent's injected clock: a device that
/// takes the connection and then says nothing, with a `ManualClock` instead of two minutes.
@Suite("Pairing: the deadline on the agent's clock", .timeLimit(.minutes(1)))
struct PairingDeadlineTests {
    static let timeout = Duration.seconds(120)
    /// The silent device: a stranger to the agent.
    static let silent: DeviceIdentity = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-unit-silent-\(UUID().uuidString.prefix(8))").path
        return try! DeviceIdentity.loadOrCreate(directory: directory, commonName: "silent")
    }()

    @Test("a silent device: still pairing one nanosecond before security.pairingTimeout, 4610 at it, nothing stored")
    func silentDeviceTimesOut() async throws {
        // A TLS listener that reads and never answers.
        let security = ListenerSecurity(tls: try PeerTLS(identity: Self.silent), handshakeDeadline: .seconds(60),
                                        registry: PeerConnectionRegistry(), isPaired: { _ in false })
        let server = try await FrameServer.bind(.tcp(host: "127.0.0.1", port: 0), limits: FrameLimits(maxUserInfoBytes: 0), security: security)
        let port = try #require(server.port)
        let serving = Task { try await server.run(logger: quietLogger) { connection in for try await _ in connection.inbound {} } }
        defer { serving.cancel() }

        let clock = ManualClock()
        let agent = makeAgent(clock: clock) { $0.security.pairingTimeout = Self.timeout }
        let finished = Atomic<Bool>(false)
        let target = "127.0.0.1:\(port)"
        let pairing = Task {
            defer { finished.store(true, ordering: .releasing) }
            return await agent.pair(with: target, link: TestLink().link)
        }
        // Connecting and the TLS handshake take real time; then the deadline sleeps on the clock.
        let deadline = ManualClock.Instant.zero.advanced(by: Self.timeout)
        for _ in 0..<500 where !clock.sleeperDeadlines.contains(deadline) && !finished.load(ordering: .acquiring) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(clock.sleeperDeadlines == [deadline], "the pairing deadline runs")

        clock.advance(by: Self.timeout - .nanoseconds(1))
        for _ in 0..<1_000 { await Task.yield() }
        try await Task.sleep(for: .milliseconds(50))
        let finishedEarly = finished.load(ordering: .acquiring)
        #expect(!finishedEarly, "still pairing one nanosecond before the deadline")

        clock.advance(by: .nanoseconds(1))
        let error = try #require(await pairing.value.error)
        #expect(error.code == .userActivityRemoteApplicationTimedOut)
        #expect(error.code.rawValue == 4610)
        #expect(error.message == "pairing with \(target) did not finish within \(Self.timeout); nothing was stored")
        #expect(clock.sleeperCount == 0)
        #expect(await agent.trust.device(Self.silent.deviceID) == nil, "nothing was stored")
        await server.close()
    }
}

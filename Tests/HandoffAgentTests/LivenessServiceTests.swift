import HandoffCore
import HandoffTestSupport
import HandoffTrust
import Testing

@testable import HandoffAgent

/// `LivenessService` over the in-memory connector and a manual clock: how it reads a failed
/// connect comes from the error's code, never from its words.
@Suite("LivenessService: reacting to the code of a failed connect")
struct LivenessServiceTests {
    static let timing = PeerLiveness<DeviceID, ManualClock.Instant>.Timing(interval: .seconds(1), timeout: .seconds(2))

    @Test("a peer that answers but fails TLS stays reachable (a matter of trust); one that cannot be reached becomes unreachable",
          arguments: [
              (.wrongCertificate, true),
              (.handshakeFailed, true),
              (.connectionRefused, false),
              (.timedOut, false),
              (.socketFailed, false),
          ] as [(PeerConnectError.Code, Bool)])
    func reactsToTheCode(code: PeerConnectError.Code, staysReachable: Bool) async throws {
        let agent = makeAgent()
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: Sample.activity(1))))
        // The same words for every code: only the code may decide.
        let connector = InMemoryConnector(.fail(PeerConnectError(code, reason: "TLS handshake failed: did not present the certificate")))
        let clock = ManualClock()
        let service = LivenessService(agent: agent, connector: connector, clock: clock, timing: Self.timing, logger: quietLogger)
        let running = Task { try await service.run() }
        defer { running.cancel() }

        // Ticks until a third attempt has started: the first two have been reported by then.
        for _ in 0..<400 where connector.attempts.count < 3 {
            try await clock.waitForSleepers(count: 1)
            clock.advance(by: Self.timing.tickInterval)
            for _ in 0..<50 { await Task.yield() }
        }
        try #require(connector.attempts.count >= 3)
        var yields = 0
        while !staysReachable, await Self.reachable(agent) != false, yields < 10_000 {
            await Task.yield()
            yields += 1
        }
        #expect(await Self.reachable(agent) == staysReachable)
        #expect(await agent.listJSON().arrayValue?.isEmpty == !staysReachable, "an unreachable peer offers nothing")
    }

    static func reachable(_ agent: Agent) async -> Bool? {
        await agent.peersJSON().arrayValue?.first?["reachable"]?.boolValue
    }

    @Test("only the codes of a peer that answered count as answered")
    func peerAnswered() {
        typealias Service = LivenessService<ManualClock>
        #expect(Service.peerAnswered(PeerConnectError(.wrongCertificate, reason: "")))
        #expect(Service.peerAnswered(PeerConnectError(.handshakeFailed, reason: "")))
        for code in [PeerConnectError.Code.connectionRefused, .timedOut, .socketFailed, .noPinnedIdentity, .other] {
            #expect(!Service.peerAnswered(PeerConnectError(code, reason: "did not present the certificate")))
        }
        struct Worded: Error, CustomStringConvertible { var description: String { "TLS handshake failed" } }
        #expect(!Service.peerAnswered(Worded()), "words are never read")
    }
}

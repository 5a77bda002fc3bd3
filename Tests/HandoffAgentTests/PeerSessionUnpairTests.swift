import Foundation
import HandoffCore
import HandoffTestSupport
import HandoffTrust
import Logging
import Synchronization
import NIOCore
import NIOEmbedded
import Testing

@testable import HandoffAgent
@testable import HandoffTransport

/// The security review's suspicion (B): a device unpaired while one of its connections stays
/// open. Unpairing closes the device's connections through the registry, but frames the
/// connection had buffered, or that arrive before the close takes effect, must not be acted on.
/// Here the connection is not in any registry, so only the session's own check per frame stands
/// between the frame and the agent.
/// Set once a session task has ended.
final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}

@Suite("PeerSession: frames from a device unpaired while its connection is open", .timeLimit(.minutes(1)))
struct PeerSessionUnpairTests {
    /// One served connection from the test peer, driven frame by frame.
    struct Served {
        let agent: Agent
        let source: NIOAsyncChannelInboundStream<Frame>.TestSource
        let writer: NIOAsyncChannelOutboundWriter<Frame>
        var written: NIOAsyncChannelOutboundWriter<Frame>.TestSink.AsyncIterator
        let session: Task<Void, any Error>
        let finished: Flag

        /// The activity the served agent holds.
        static let activity = Sample.activity(1, title: "Notes")

        /// Serves, for a new agent paired with the test peer and holding ``activity``, a
        /// connection on which the test peer presented its certificate, and completes the handshake.
        static func start() async throws -> Served {
            let agent = makeAgent()
            _ = try await agent.publish(activity)
            let (inbound, source) = NIOAsyncChannelInboundStream<Frame>.makeTestingStream()
            let (outbound, sink) = NIOAsyncChannelOutboundWriter<Frame>.makeTestingWriter()
            let identity = PeerIdentityBox()
            identity.set(TestPeer.deviceID, certificateDER: TestPeer.peerIdentity.certificateDER)
            let splice = try StreamSplice.add(to: EmbeddedChannel())
            let connection = FrameServer.Connection(inbound: inbound, outbound: outbound, remoteAddress: nil, peerIdentity: identity,
                                                    gate: nil, peerUID: nil, splice: splice)
            let finished = Flag()
            let session = Task {
                defer { finished.value.store(true, ordering: .releasing) }
                try await PeerSession.serve(connection, agent: agent, logger: Logger(label: "unit", factory: { _ in SwiftLogNoOpLogHandler() }))
            }
            var served = Served(agent: agent, source: source, writer: outbound, written: sink.makeAsyncIterator(), session: session, finished: finished)
            source.yield(PeerMessage.hello(PeerHello(agentID: "peer-kitchen", name: "test peer")).frame)
            let answer = try #require(await served.written.next())
            #expect(answer.kind == .hello)
            return served
        }

        /// Whether the session ended on its own within `seconds` (it was not told that the
        /// connection closed).
        func ended(within seconds: Double) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline, !finished.value.load(ordering: .acquiring) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return finished.value.load(ordering: .acquiring)
        }

        /// What the session wrote after the handshake, once it has ended.
        mutating func writtenAfterHandshake() async -> [Frame] {
            writer.finish()
            var frames: [Frame] = []
            while let frame = await written.next() { frames.append(frame) }
            return frames
        }
    }

    enum Sent: String, CaseIterable, CustomTestStringConvertible {
        case continued, open, streamOpen, keys
        var testDescription: String { rawValue }

        func frame(for activity: UUID) -> Frame {
            switch self {
            case .continued: PeerMessage.continued(FetchRequest(activityID: activity, continuationID: UUID())).frame
            case .open: PeerMessage.open(OpenRequest(bundleID: "com.example.notes", url: URL(string: "https://example.com/x"))).frame
            case .streamOpen: PeerMessage.streamOpen(StreamRequest(activityID: activity, streamID: UUID())).frame
            case .keys: PeerMessage.keys(advertisingKey: AdvertisingKey.random().bytes).frame
            }
        }
    }

    @Test("a frame sent after the unpair is not acted on: nothing is answered and the session ends", arguments: Sent.allCases)
    func frameAfterUnpairIsDropped(_ sent: Sent) async throws {
        var served = try await Served.start()
        let (agent, activity) = (served.agent, Served.activity)
        let keyBefore = await agent.advertisingKey
        _ = try await agent.trustRemove(TestPeer.deviceID)
        let keyAfterUnpair = await agent.advertisingKey
        #expect(keyAfterUnpair != keyBefore, "unpairing rotates the key")

        served.source.yield(sent.frame(for: activity.id))
        #expect(await served.ended(within: 5), "the session ends at the first frame after the unpair")
        #expect(await served.writtenAfterHandshake().isEmpty, "nothing is answered to a device no longer paired")
        // Nothing reached the agent: the key it would answer a `keys` frame with did not move,
        // and the unpaired device was not stored again.
        #expect(await agent.advertisingKey == keyAfterUnpair)
        #expect(await !agent.isPaired(TestPeer.deviceID))
    }

    @Test("a fetch after the unpair is told why, and gets no activity")
    func fetchAfterUnpairIsToldWhy() async throws {
        var served = try await Served.start()
        let (agent, activity) = (served.agent, Served.activity)
        _ = try await agent.trustRemove(TestPeer.deviceID)

        served.source.yield(PeerMessage.fetch(FetchRequest(activityID: activity.id, continuationID: UUID())).frame)
        #expect(await served.ended(within: 5))
        let written = await served.writtenAfterHandshake()
        #expect(written.map(\.kind) == [.error])
        guard case .error(let code, let message) = try PeerMessage(frame: written[0]) else { Issue.record("not an error: \(written)"); return }
        #expect(code == HandoffError.Code.userActivityConnectionUnavailable.rawValue)
        #expect(message.contains("no longer paired"), "\(message)")
    }

    @Test("while still paired, the same connection is served: the control for the tests above")
    func pairedConnectionIsServed() async throws {
        var served = try await Served.start()
        let (agent, activity) = (served.agent, Served.activity)
        served.source.yield(Sent.continued.frame(for: activity.id))
        served.source.yield(PeerMessage.fetch(FetchRequest(activityID: activity.id, continuationID: UUID())).frame)
        let answer = try #require(await served.written.next())
        #expect(answer.kind == .activity, "a `continued` is taken and the session goes on to the fetch")
        #expect(await !served.ended(within: 0.2), "the connection stays for the next fetch")
        served.source.finish()
        #expect(await served.ended(within: 5))
    }
}

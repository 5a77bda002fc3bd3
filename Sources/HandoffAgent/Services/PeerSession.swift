import HandoffCore
import HandoffTransport
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The source side of one peer connection: the handshake, then fetches answered from the
/// agent's activities. Malformed input ends only this connection.
public enum PeerSession {
    /// One peer connection: handshake, then fetches.
    public static func serve(_ connection: FrameServer.Connection, agent: Agent, logger: Logger) async throws {
        var machine = SourceSessionStateMachine(hello: agent.hello)
        let delay = agent.configuration.faults.payloadDelay
        let remote = connection.remoteAddress.map { "\($0)" } ?? "unknown"
        var inbound = connection.inbound.makeAsyncIterator()
        while let frame = try await inbound.next() {
            let peerName = machine.peer?.name ?? remote
            switch machine.received(frame) {
            case .send(let frames):
                for frame in frames { try await connection.outbound.write(frame) }
            case .lookUp(let request):
                let prepared = await agent.prepareForFetch(id: request.activityID)
                if delay > .zero {
                    logger.info("fault: delaying payload", metadata: ["handoff.remote": "\(remote)", "handoff.delay": "\(delay)"])
                    try await Task.sleep(for: delay)
                }
                let action: SourceSessionStateMachine.Action
                switch prepared {
                case .success(let found): action = machine.lookedUp(found?.0, source: found?.1, request: request, now: Date())
                case .failure(let error): action = machine.lookUpFailed(error)
                }
                guard case .send(let frames) = action else { return }
                logger.info("serving fetch", metadata: [
                    "handoff.remote": "\(remote)", "handoff.id": "\(request.activityID)",
                    "handoff.continuation": "\(request.continuationID)", "handoff.found": "\(frames.first?.kind == .activity)",
                ])
                for frame in frames { try await connection.outbound.write(frame) }
            case .notifyContinued(let request):
                await agent.activityWasContinued(request, by: peerName)
                return
            case .receiveOpen(let request):
                try await OpenURLTransfer.receive(request, inbound: &inbound, outbound: connection.outbound,
                                                  peer: peerName, agent: agent)
                return
            case .openStreams(let request):
                switch await agent.awaitStreamApp(request, peerOutbound: connection.outbound) {
                case .failure(let error):
                    try await connection.outbound.write(PeerMessage.error(code: error.code.rawValue, message: error.message).frame)
                case .success(let appOutbound):
                    try await connection.outbound.write(PeerMessage.streamAccepted.frame)
                    // Peer to app here; the app's own session pumps app to peer.
                    try await StreamChannels.pump(&inbound, to: appOutbound)
                }
                return
            case .sendAndClose(let frames, let reason):
                for frame in frames { try await connection.outbound.write(frame) }
                logger.info("closing peer connection", metadata: ["handoff.remote": "\(remote)", "handoff.reason": "\(reason)"])
                return
            }
        }
    }
}

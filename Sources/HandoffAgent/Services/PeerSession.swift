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
        for try await frame in connection.inbound {
            switch machine.received(frame) {
            case .send(let frames):
                for frame in frames { try await connection.outbound.write(frame) }
            case .lookUp(let request):
                let activity = await agent.lookUp(id: request.activityID)
                if delay > .zero {
                    logger.info("fault: delaying payload", metadata: ["handoff.remote": "\(remote)", "handoff.delay": "\(delay)"])
                    try await Task.sleep(for: delay)
                }
                let action = machine.lookedUp(activity, request: request, now: Date())
                guard case .send(let frames) = action else { return }
                logger.info("serving fetch", metadata: [
                    "handoff.remote": "\(remote)", "handoff.id": "\(request.activityID)",
                    "handoff.continuation": "\(request.continuationID)", "handoff.found": "\(frames.first?.kind == .activity)",
                ])
                for frame in frames { try await connection.outbound.write(frame) }
            case .sendAndClose(let frames, let reason):
                for frame in frames { try await connection.outbound.write(frame) }
                logger.info("closing peer connection", metadata: ["handoff.remote": "\(remote)", "handoff.reason": "\(reason)"])
                return
            }
        }
    }
}

import HandoffCore
import HandoffTransport
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Answers peers' fetches on the TCP listener. Malformed input closes only that connection.
public struct PeerListenerService: Service {
    let server: FrameServer
    let agent: Agent
    let logger: Logger

    public init(server: FrameServer, agent: Agent, logger: Logger) {
        self.server = server
        self.agent = agent
        self.logger = logger
    }

    public func run() async throws {
        let agent = self.agent
        let logger = self.logger
        try await cancelWhenGracefulShutdown {
            try await server.run(logger: logger) { connection in
                try await Self.serve(connection, agent: agent, logger: logger)
            }
        }
    }

    /// One peer connection: handshake, then fetches.
    static func serve(_ connection: FrameServer.Connection, agent: Agent, logger: Logger) async throws {
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

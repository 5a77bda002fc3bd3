import HandoffTransport
import Logging
import ServiceLifecycle

/// Runs a ``FrameServer`` as a ServiceLifecycle service: each connection goes to `serve` in its
/// own child task; graceful shutdown stops accepting and ends the open connections.
public struct FrameServerService: Service {
    let server: FrameServer
    let logger: Logger
    let serve: @Sendable (FrameServer.Connection) async throws -> Void

    public init(server: FrameServer, logger: Logger, serve: @escaping @Sendable (FrameServer.Connection) async throws -> Void) {
        self.server = server
        self.logger = logger
        self.serve = serve
    }

    public func run() async throws {
        try await cancelWhenGracefulShutdown {
            try await server.run(logger: logger, handler: serve)
        }
    }
}

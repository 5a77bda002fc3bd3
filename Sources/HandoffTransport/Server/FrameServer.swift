import HandoffCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listening socket whose connections carry frames: the agent's TCP listener for peers and its
/// Unix control socket. Each connection runs in its own child task; an error on one connection
/// closes only that connection.
public struct FrameServer: Sendable {
    /// Where to listen.
    public enum Address: Sendable, Hashable, CustomStringConvertible {
        case tcp(host: String, port: Int)
        /// A Unix domain socket; the file is created with mode 0600 and replaced if stale.
        case unix(path: String)

        public var description: String {
            switch self {
            case .tcp(let host, let port): "tcp \(host):\(port)"
            case .unix(let path): "unix \(path)"
            }
        }
    }

    /// One accepted connection.
    public struct Connection: Sendable {
        /// Frames from the client.
        public var inbound: NIOAsyncChannelInboundStream<Frame>
        /// Frames to the client.
        public var outbound: NIOAsyncChannelOutboundWriter<Frame>
        /// The client's address (nil for Unix sockets).
        public var remoteAddress: SocketAddress?
    }

    let channel: NIOAsyncChannel<NIOAsyncChannel<Frame, Frame>, Never>
    /// Accepted connections not yet taken by ``run(logger:handler:)``. NIO requires every
    /// connection to be closed through `executeThenClose`; when the accept loop is cancelled,
    /// these are closed that way instead of being dropped.
    let unclaimed: UnclaimedConnections
    /// The bound address.
    public let address: Address
    /// The bound TCP port (useful when 0 was asked for), nil for Unix sockets.
    public var port: Int? { channel.channel.localAddress?.port }

    /// Binds a listener. Frames over `limits` close their connection.
    public static func bind(_ address: Address, limits: FrameLimits, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> FrameServer {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        let unclaimed = UnclaimedConnections()
        let initializer: @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<Frame, Frame>> = { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addFrameCodec(limits: limits)
                let connection = try NIOAsyncChannel<Frame, Frame>(wrappingChannelSynchronously: channel)
                unclaimed.add(connection)
                return connection
            }
        }
        let channel: NIOAsyncChannel<NIOAsyncChannel<Frame, Frame>, Never>
        switch address {
        case .tcp(let host, let port):
            channel = try await bootstrap.bind(host: host, port: port, childChannelInitializer: initializer)
        case .unix(let path):
            channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true, childChannelInitializer: initializer)
            guard chmod(path, 0o600) == 0 else {
                try? await channel.channel.close()
                throw FrameServerError(message: "cannot set mode 0600 on control socket \(path): errno \(errno)")
            }
        }
        return FrameServer(channel: channel, unclaimed: unclaimed, address: address)
    }

    /// Accepts connections until the task is cancelled or the listener closes, running `handler`
    /// for each in a child task. Returns once every connection has finished.
    public func run(logger: Logger, handler: @escaping @Sendable (Connection) async throws -> Void) async throws {
        do {
            try await accept(logger: logger, handler: handler)
        } catch is CancellationError {
            // Cancelled (graceful shutdown): a normal end, not a failure.
        } catch {
            await closeUnclaimed()
            throw error
        }
        await closeUnclaimed()
    }

    /// Closes connections accepted but never handed to the handler, as NIO requires.
    private func closeUnclaimed() async {
        for connection in unclaimed.takeAll() {
            try? await connection.executeThenClose { _, _ in }
        }
    }

    private func accept(logger: Logger, handler: @escaping @Sendable (Connection) async throws -> Void) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await channel.executeThenClose { inbound in
                for try await client in inbound {
                    unclaimed.remove(client)
                    group.addTask {
                        let remote = client.channel.remoteAddress
                        do {
                            try await client.executeThenClose { clientInbound, clientOutbound in
                                try await handler(Connection(inbound: clientInbound, outbound: clientOutbound, remoteAddress: remote))
                            }
                        } catch is CancellationError {
                            // Shutting down: not worth a log line per connection.
                        } catch {
                            logger.info("closed connection after an error", metadata: [
                                "handoff.listener": "\(address)", "handoff.remote": "\(remote.map { "\($0)" } ?? "local")",
                                "handoff.error": "\(error)",
                            ])
                        }
                    }
                }
            }
        }
    }

    /// Stops accepting.
    public func close() async {
        try? await channel.channel.close()
    }
}

/// Connections accepted by NIO that the accept loop has not taken yet.
final class UnclaimedConnections: Sendable {
    private let connections = Mutex<[ObjectIdentifier: NIOAsyncChannel<Frame, Frame>]>([:])

    func add(_ connection: NIOAsyncChannel<Frame, Frame>) {
        connections.withLock { $0[ObjectIdentifier(connection.channel)] = connection }
    }

    func remove(_ connection: NIOAsyncChannel<Frame, Frame>) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection.channel)) }
    }

    func takeAll() -> [NIOAsyncChannel<Frame, Frame>] {
        connections.withLock { all in
            defer { all = [:] }
            return Array(all.values)
        }
    }
}

/// A listener that could not be set up.
public struct FrameServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

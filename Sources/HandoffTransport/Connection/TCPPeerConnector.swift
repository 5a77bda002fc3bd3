import HandoffCore
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Connects to peer agents over TCP with SwiftNIO.
public struct TCPPeerConnector: PeerConnector {
    let group: any EventLoopGroup
    let connectTimeout: Duration

    /// - Parameters:
    ///   - group: the event loops to use.
    ///   - connectTimeout: the socket-level connect timeout (the continuation's own deadline is
    ///     kept by ``ContinuationClient``; this one frees the socket).
    public init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, connectTimeout: Duration) {
        self.group = group
        self.connectTimeout = connectTimeout
    }

    public func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        do {
            return try await open(endpoint, limits: limits)
        } catch let error as NIOConnectionError {
            throw PeerConnectError(reason: error.connectionErrors.first.map { Self.reason($0.error) } ?? "\(error)")
        } catch {
            throw PeerConnectError(reason: Self.reason(error))
        }
    }

    private static func reason(_ error: any Error) -> String {
        if let io = error as? IOError { return String(cString: strerror(io.errnoCode)).lowercased() }
        if error is ChannelError, case .connectTimeout = error as! ChannelError { return "connect timed out" }
        return "\(error)"
    }

    private func open(_ endpoint: PeerEndpoint, limits: FrameLimits) async throws -> ChannelFrameConnection {
        try await ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: endpoint.host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture { try ChannelFrameConnection.configure(channel, limits: limits) }
            }
    }
}

/// Why a connection to a peer could not be opened, in a few words ("connection refused").
public struct PeerConnectError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// Connects to an agent's local control socket.
public enum ControlSocketConnector {
    /// Opens a framed connection to the Unix socket at `path`.
    public static func connect(path: String, limits: FrameLimits, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> any FrameConnection {
        try await ClientBootstrap(group: group)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture { try ChannelFrameConnection.configure(channel, limits: limits) }
            }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

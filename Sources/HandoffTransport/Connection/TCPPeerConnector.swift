import HandoffCore
import HandoffTrust
import NIOCore
import NIOPosix

/// The daemon's ``PeerTransport``: connects to peer agents over TCP with SwiftNIO, in TLS 1.3
/// with this device's certificate.
public struct TCPPeerConnector: PeerTransport {
    let group: any EventLoopGroup
    /// The socket-level connect timeout now (read at each connect: handoffd's follows reloads).
    let currentConnectTimeout: @Sendable () -> Duration
    let tls: PeerClientTLS?
    var connectTimeout: Duration { currentConnectTimeout() }

    /// - Parameters:
    ///   - group: the event loops to use.
    ///   - connectTimeout: the socket-level connect timeout (the continuation's own deadline is
    ///     kept by ``ContinuationClient``; this one frees the socket).
    ///   - tls: this device's TLS; nil only for tests of the plain protocol.
    public init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, connectTimeout: Duration, tls: PeerClientTLS? = nil) {
        self.init(group: group, connectTimeout: { connectTimeout }, tls: tls)
    }

    /// A connector whose connect timeout is read at each connect (`limits.connectTimeout` as a
    /// reload left it).
    public init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, connectTimeout: @escaping @Sendable () -> Duration,
                tls: PeerClientTLS? = nil) {
        self.group = group
        self.currentConnectTimeout = connectTimeout
        self.tls = tls
    }

    /// Connects to a peer that must present `endpoint.expectedIdentity`. With TLS configured, an
    /// endpoint without an expected identity is refused: use ``connectUnpinned(to:limits:)``.
    public func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        let expected = try tls.map { _ in try PeerClientTLS.expectedIdentity(of: endpoint) }
        return try await connecting(endpoint, limits: limits, expecting: expected)
    }

    /// Connects to whatever device answers at `endpoint` (pairing, or learning the advertising key
    /// of a peer whose advertisement cannot be read yet). The caller must check
    /// ``ChannelFrameConnection/peerIdentity`` before trusting anything it says.
    public func connectUnpinned(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> ChannelFrameConnection {
        try await connecting(endpoint, limits: limits, expecting: nil)
    }

    /// Connects to the peer `endpoint.expectedIdentity` for a stream of frames (continuation
    /// streams, `open`). With a ``StreamSplice`` as `options.relayPartner` (the app connection's),
    /// the connection runs on the partner's event loop with a holding splice of its own
    /// (``ChannelStreamConnection/splice``), so that the relay of the pair stays on one thread and
    /// stream bytes go from channel to channel without reaching the async side.
    public func connectStream(to endpoint: PeerEndpoint, limits: FrameLimits, options: PeerStreamOptions) async throws -> ChannelStreamConnection {
        if let partner = options.relayPartner as? StreamSplice {
            let (channel, splice) = try await StreamChannels.connectForRelay(
                to: endpoint, limits: limits, connectTimeout: connectTimeout, tls: tls, idleTimeout: options.idleTimeout, group: partner.eventLoop)
            return ChannelStreamConnection(channel: channel, splice: splice)
        }
        let channel = try await StreamChannels.connect(to: endpoint, limits: limits, connectTimeout: connectTimeout, tls: tls,
                                                       idleTimeout: options.idleTimeout, group: group)
        return ChannelStreamConnection(channel: channel, splice: nil)
    }

    private func connecting(_ endpoint: PeerEndpoint, limits: FrameLimits, expecting expected: DeviceID?) async throws -> ChannelFrameConnection {
        do {
            let connection = try await open(endpoint, limits: limits, expecting: expected)
            // The handshake must finish (and the pinned certificate be checked) before use.
            if let handshake = connection.handshake {
                do { try await handshake.get() } catch {
                    await connection.close()
                    throw error
                }
            }
            return connection
        } catch {
            throw PeerConnectError(connecting: error, expected: expected)
        }
    }

    private func open(_ endpoint: PeerEndpoint, limits: FrameLimits, expecting expected: DeviceID?) async throws -> ChannelFrameConnection {
        let tls = self.tls
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.recvAllocator, value: FrameReads.recvAllocator)
        return try await AddressFallback.connect(endpoint) { host in
            try await bootstrap.connect(host: host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let tls else { return try ChannelFrameConnection.configure(channel, limits: limits) }
                    let (box, handshake) = try tls.addHandlers(to: channel, expecting: expected)
                    return try ChannelFrameConnection.configure(channel, limits: limits, peerIdentity: box, handshake: handshake)
                }
            }
        }
    }
}

/// Connects to an agent's local control socket.
public enum ControlSocketConnector {
    /// Opens a framed connection to the Unix socket at `path`, after ``ControlSocketCheck``: the
    /// socket's directory must be this user's and the listening process of this uid, else this
    /// throws ``ControlSocketError`` before anything is sent.
    public static func connect(path: String, limits: FrameLimits, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> any FrameConnection {
        try ControlSocketCheck.checkDirectory(ofSocket: path)
        let connection = try await ClientBootstrap(group: group)
            .channelOption(.recvAllocator, value: FrameReads.recvAllocator)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture { try ChannelFrameConnection.configure(channel, limits: limits) }
            }
        do { try await ControlSocketCheck.checkServer(connection.channel, socketPath: path) } catch {
            await connection.close()
            throw error
        }
        return connection
    }
}

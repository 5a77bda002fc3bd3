import HandoffCore
import NIOCore
import NIOPosix

/// A framed channel for continuation streams: NIOAsyncChannel reads with bounded buffering and
/// writes that wait while the socket is not writable, so bytes move with backpressure end to end.
public typealias FrameChannel = NIOAsyncChannel<Frame, Frame>

/// A framed channel that reads and writes frames as their wire bytes (``EncodedFrame``): an app's
/// continuation streams, whose data is written into frames once and read out of them once.
public typealias EncodedFrameChannel = NIOAsyncChannel<EncodedFrame, EncodedFrame>

/// Opens framed channels for continuation streams: to peers for ``TCPPeerConnector``, and to the
/// local agent's control socket for an app.
public enum StreamChannels {
    /// A TCP channel to a peer agent; with `tls`, the peer must present the certificate of
    /// `endpoint.expectedIdentity`, and the channel is returned once the handshake is done.
    ///
    /// With an `idleTimeout`, reading fails with ``StreamIdleTimeout`` once nothing has arrived
    /// for that long (`limits.streamIdleTimeout`).
    static func connect(to endpoint: PeerEndpoint, limits: FrameLimits, connectTimeout: Duration, tls: PeerClientTLS?,
                        idleTimeout: Duration? = nil,
                        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> FrameChannel {
        try await connect(to: endpoint, limits: limits, connectTimeout: connectTimeout, tls: tls, idleTimeout: idleTimeout,
                          splice: false, group: group).channel
    }

    /// A TCP channel to a peer agent, as ``connect(to:limits:connectTimeout:tls:idleTimeout:group:)``,
    /// with a holding ``StreamSplice``: the continuing agent's end of a relayed stream pair. Stream
    /// frames that arrive before the splice is joined are kept for the app; the handshake's frames
    /// reach the async side. Pass the app connection's event loop as `group`, so the relay stays
    /// on one thread.
    static func connectForRelay(to endpoint: PeerEndpoint, limits: FrameLimits, connectTimeout: Duration, tls: PeerClientTLS?,
                                idleTimeout: Duration? = nil,
                                group: any EventLoopGroup) async throws -> (channel: FrameChannel, splice: StreamSplice) {
        let (channel, splice) = try await connect(to: endpoint, limits: limits, connectTimeout: connectTimeout, tls: tls,
                                                  idleTimeout: idleTimeout, splice: true, group: group)
        return (channel, splice!)
    }

    private static func connect(to endpoint: PeerEndpoint, limits: FrameLimits, connectTimeout: Duration, tls: PeerClientTLS?,
                                idleTimeout: Duration?, splice: Bool,
                                group: any EventLoopGroup) async throws -> (channel: FrameChannel, splice: StreamSplice?) {
        let expected = try tls.map { _ in try PeerClientTLS.expectedIdentity(of: endpoint) }
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.recvAllocator, value: FrameReads.recvAllocator)
            .channelOption(.maxMessagesPerRead, value: StreamSplice.maxMessagesPerRead)
        let (channel, handshake, added) = try await AddressFallback.connect(endpoint) { host in
            try await bootstrap.connect(host: host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handshake = try tls.map { try $0.addHandlers(to: channel, expecting: expected).1 }
                    let (framed, added) = try configure(channel, limits: limits, idleTimeout: idleTimeout, holdingSplice: splice)
                    return (framed, handshake, added)
                }
            }
        }
        if let handshake {
            do { try await handshake.get() } catch {
                try? await channel.executeThenClose { _, _ in }
                throw PeerConnectError(connecting: error, expected: expected)
            }
        }
        return (channel, added)
    }

    /// Sets up a peer stream channel after its TLS handlers (if any): the idle timer, the frame
    /// codec and, for the continuing agent's end of a relayed pair, a holding ``StreamSplice``.
    static func configure(_ channel: any Channel, limits: FrameLimits, idleTimeout: Duration?,
                          holdingSplice: Bool) throws -> (channel: FrameChannel, splice: StreamSplice?) {
        if let idleTimeout {
            try channel.pipeline.syncOperations.addHandler(StreamIdleTimer(timeout: idleTimeout))
        }
        try channel.pipeline.syncOperations.addFrameCodec(limits: limits)
        let added = holdingSplice ? try StreamSplice.add(to: channel, holding: true) : nil
        return (try FrameChannel(wrappingChannelSynchronously: channel), added)
    }

    /// Sets up an app's end of a stream pair on its channel to the agent: frames as their wire bytes.
    static func configureAppEnd(_ channel: any Channel) throws -> EncodedFrameChannel {
        try channel.pipeline.syncOperations.addFrameCodec(limits: ControlProtocol.limits, messages: false)
        return try EncodedFrameChannel(wrappingChannelSynchronously: channel)
    }

    /// A channel to the local agent's control socket that speaks ``EncodedFrame``s: an app's end
    /// of a continuation stream pair. Reads adapt up to 256 KiB, as on the agent's side. The
    /// socket passes ``ControlSocketCheck`` first (else ``ControlSocketError``, nothing sent).
    public static func connect(controlSocket path: String,
                               group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> EncodedFrameChannel {
        try ControlSocketCheck.checkDirectory(ofSocket: path)
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.recvAllocator, value: FrameReads.recvAllocator)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture { try configureAppEnd(channel) }
            }
        do { try await ControlSocketCheck.checkServer(channel.channel, socketPath: path) } catch {
            try? await channel.executeThenClose { _, _ in }
            throw error
        }
        return channel
    }
}

/// Nothing arrived on a continuation stream for `limits.streamIdleTimeout`.
public struct StreamIdleTimeout: Error, Sendable, CustomStringConvertible {
    /// The timeout that passed.
    public var timeout: Duration
    public var description: String { "nothing arrived on the continuation stream for \(timeout) (limits.streamIdleTimeout)" }
}

/// Fails the channel with ``StreamIdleTimeout`` and closes it once nothing has been read for
/// `timeout`. Time is the event loop's (`EventLoop.now`), so an `EmbeddedEventLoop` drives it in
/// tests; a read only records the time, and one timer is pending at a time.
final class StreamIdleTimer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let timeout: Duration
    private let amount: TimeAmount
    private var lastRead = NIODeadline.distantPast
    private var check: Scheduled<Void>?

    init(timeout: Duration) {
        self.timeout = timeout
        self.amount = TimeAmount(timeout)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = context.eventLoop.now
        context.fireChannelRead(data)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard check == nil else { return }
        lastRead = context.eventLoop.now
        schedule(context, at: lastRead + amount)
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        let loop = context.eventLoop.assumeIsolated()
        check = loop.scheduleTask(deadline: deadline) { [self] in
            let due = lastRead + amount
            guard context.eventLoop.now >= due else {
                schedule(context, at: due)
                return
            }
            check = nil
            context.fireErrorCaught(StreamIdleTimeout(timeout: timeout))
            context.close(promise: nil)
        }
    }
}

import HandoffCore
import NIOCore
import NIOPosix

/// A framed channel for continuation streams: NIOAsyncChannel reads with bounded buffering and
/// writes that wait while the socket is not writable, so bytes move with backpressure end to end.
public typealias FrameChannel = NIOAsyncChannel<Frame, Frame>

/// Opens framed channels for continuation streams.
public enum StreamChannels {
    /// A TCP channel to a peer agent; with `tls`, the peer must present the certificate of
    /// `endpoint.expectedIdentity`, and the channel is returned once the handshake is done.
    ///
    /// With an `idleTimeout`, reading fails with ``StreamIdleTimeout`` once nothing has arrived
    /// for that long (`limits.streamIdleTimeout`).
    public static func connect(to endpoint: PeerEndpoint, limits: FrameLimits, connectTimeout: Duration, tls: PeerClientTLS?,
                               idleTimeout: Duration? = nil,
                               group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> FrameChannel {
        let expected = try tls.map { _ in try PeerClientTLS.expectedIdentity(of: endpoint) }
        let (channel, handshake) = try await ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: endpoint.host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handshake = try tls.map { try $0.addHandlers(to: channel, expecting: expected).1 }
                    if let idleTimeout {
                        try channel.pipeline.syncOperations.addHandler(StreamIdleTimer(timeout: idleTimeout))
                    }
                    try channel.pipeline.syncOperations.addFrameCodec(limits: limits)
                    return (try FrameChannel(wrappingChannelSynchronously: channel), handshake)
                }
            }
        if let handshake {
            do { try await handshake.get() } catch {
                try? await channel.executeThenClose { _, _ in }
                throw PeerConnectError(reason: PeerClientTLS.reason(error, expected: expected) ?? TCPPeerConnector.reason(error))
            }
        }
        return channel
    }

    /// A channel to the local agent's control socket.
    public static func connect(controlSocket path: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> FrameChannel {
        try await ClientBootstrap(group: group)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addFrameCodec(limits: ControlProtocol.limits)
                    return try FrameChannel(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// Copies stream frames from `inbound` to `outbound` until the sender's `streamEnd` (passed on
    /// with `writeLast`, so it is out of the process when this returns) or the end of `inbound`,
    /// then finishes `outbound`. Frames other than stream data and end are a protocol error.
    ///
    /// - Parameters:
    ///   - writeLast: writes the `streamEnd` frame and returns once it, and everything before it,
    ///     has been handed to the socket (``FrameServer/Connection/writeAndWait``).
    ///   - stallAfterBytes: fault injection (`faults.stallStreamAfterBytes`): after this many
    ///     bytes of stream data, nothing more is passed on, and `outbound` stays open, until
    ///     `inbound` ends.
    ///   - lastWords: when `inbound` fails, a frame to send before finishing `outbound` (an
    ///     error the far end can report), or nil.
    /// - Returns: how this direction ended.
    @discardableResult
    public static func pump<I: AsyncIteratorProtocol>(_ inbound: inout I, to outbound: NIOAsyncChannelOutboundWriter<Frame>,
                                                      writeLast: @Sendable (Frame) async throws -> Void,
                                                      stallAfterBytes: Int? = nil,
                                                      lastWords: (@Sendable (any Error) -> Frame?)? = nil) async throws -> StreamDirectionEnd
    where I.Element == Frame {
        defer { outbound.finish() }
        var budget = stallAfterBytes ?? .max
        do {
            while let frame = try await inbound.next() {
                guard frame.kind == .streamData || frame.kind == .streamEnd else {
                    throw FrameError.unexpected(kind: frame.kind, expecting: "stream data")
                }
                guard budget > 0 else { continue }
                if frame.kind == .streamEnd {
                    try await writeLast(frame)
                    return .ended
                }
                if frame.payload.count > budget {
                    try await outbound.write(Frame(kind: .streamData, payload: Array(frame.payload.prefix(budget))))
                    budget = 0
                    continue
                }
                if stallAfterBytes != nil { budget -= frame.payload.count }
                try await outbound.write(frame)
            }
            return .closed
        } catch {
            if let frame = lastWords?(error) { try? await outbound.write(frame) }
            throw error
        }
    }
}

/// How one direction of a continuation stream ended at a relaying agent.
public enum StreamDirectionEnd: Sendable, Equatable {
    /// The sender's `streamEnd` was passed on: this direction is complete.
    case ended
    /// The sender's connection ended without `streamEnd`: it went away.
    case closed
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
        self.amount = .nanoseconds(timeout.nanosecondsClamped)
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

extension Duration {
    /// The duration in nanoseconds, clamped to Int64.
    var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : scaled + attoseconds / 1_000_000_000
    }
}

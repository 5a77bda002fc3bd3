import HandoffCore
import NIOCore
import NIOPosix

/// A framed channel for continuation streams: NIOAsyncChannel reads with bounded buffering and
/// writes that wait while the socket is not writable, so bytes move with backpressure end to end.
public typealias FrameChannel = NIOAsyncChannel<Frame, Frame>

/// Opens framed channels for continuation streams.
public enum StreamChannels {
    /// A TCP channel to a peer agent.
    public static func connect(to endpoint: PeerEndpoint, limits: FrameLimits, connectTimeout: Duration,
                               group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> FrameChannel {
        try await ClientBootstrap(group: group)
            .connectTimeout(TimeAmount(connectTimeout))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: endpoint.host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addFrameCodec(limits: limits)
                    return try FrameChannel(wrappingChannelSynchronously: channel)
                }
            }
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

    /// Copies stream frames from `inbound` to `outbound` until `inbound` ends, then finishes
    /// `outbound` (so the far end sees the close). Frames other than stream data and end are a
    /// protocol error.
    public static func pump<I: AsyncIteratorProtocol>(_ inbound: inout I, to outbound: NIOAsyncChannelOutboundWriter<Frame>) async throws
    where I.Element == Frame {
        defer { outbound.finish() }
        while let frame = try await inbound.next() {
            guard frame.kind == .streamData || frame.kind == .streamEnd else {
                throw FrameError.unexpected(kind: frame.kind, expecting: "stream data")
            }
            try await outbound.write(frame)
        }
    }
}

import HandoffCore
import NIOCore

/// A ``PeerStreamConnection`` over a NIO channel (``FrameChannel``): reads with bounded
/// buffering, writes that wait while the socket is not writable. Opened by
/// ``TCPPeerConnector/connectStream(to:limits:options:)``.
public final class ChannelStreamConnection: PeerStreamConnection {
    /// The channel; used only through ``executeThenClose(_:)`` and ``close()``.
    let channel: FrameChannel
    /// The connection's end of a relayed stream pair, when it was opened with a relay partner:
    /// stream frames that arrive before the join are held for the app, the handshake's frames
    /// reach ``executeThenClose(_:)``'s inbound. Joining it with the partner's
    /// (``StreamSplice/join(_:_:firstFrame:_:_:firstFrame:onEnd:)``) is the TCP fast path of a
    /// relay: stream bytes go from channel to channel on the event loop.
    public let splice: StreamSplice?

    init(channel: FrameChannel, splice: StreamSplice?) {
        self.channel = channel
        self.splice = splice
    }

    public func executeThenClose<R: Sendable>(_ body: (_ inbound: PeerFrameInbound, _ outbound: PeerFrameOutbound) async throws -> R) async throws -> R {
        try await channel.executeThenClose { inbound, outbound in
            try await body(PeerFrameInbound(inbound), PeerFrameOutbound(one: { try await outbound.write($0) },
                                                                         many: { try await outbound.write(contentsOf: $0) }))
        }
    }

    public func close() {
        channel.channel.close(promise: nil)
    }
}

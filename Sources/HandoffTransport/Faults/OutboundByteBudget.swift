import NIOCore

/// Fault injection (`faults.dropAfterBytes`): lets the first `budget` bytes of frames through,
/// then closes the connection mid-frame, as a peer that crashes or loses its link would.
///
/// It sits between the frame encoder and TLS, so it counts the bytes of frames, not of TLS
/// records. It is added only while the fault is set
/// (``FrameServer/Connection/limitOutbound(toBytes:)``): a connection without it has no fault
/// code in its path.
final class OutboundByteBudget: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var remaining: Int

    init(budget: Int) { remaining = max(0, budget) }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var buffer = unwrapOutboundIn(data)
        guard remaining > 0 || buffer.readableBytes == 0 else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            context.close(promise: nil)
            return
        }
        if buffer.readableBytes <= remaining {
            remaining -= buffer.readableBytes
            context.write(data, promise: promise)
            return
        }
        let head = buffer.readSlice(length: remaining)!
        remaining = 0
        context.writeAndFlush(wrapOutboundOut(head), promise: nil)
        promise?.fail(ChannelError.ioOnClosedChannel)
        context.close(promise: nil)
    }
}

extension Channel {
    /// Fault injection: from now on, lets `budget` more bytes of frames out, then closes.
    func limitOutbound(toBytes budget: Int) async {
        try? await eventLoop.submit {
            let sync = self.pipeline.syncOperations
            let encoder = try sync.handler(type: FrameEncoder.self)
            try sync.addHandler(OutboundByteBudget(budget: budget), position: .before(encoder))
        }.get()
    }
}

extension FrameServer.Connection {
    /// Fault injection (`faults.dropAfterBytes`): from now on, lets `budget` more bytes of frames
    /// out, then closes the connection mid-frame, as a peer that crashes or loses its link would.
    public func limitOutbound(toBytes budget: Int) async {
        guard let faultSite else { return await splice.channel.limitOutbound(toBytes: budget) }
        await faultSite.limitOutbound(toBytes: budget)
    }
}

import HandoffCore
import NIOCore

/// Fault injection (`faults.stallStreamAfterBytes`): stream data read from a connection stops
/// after a budget of bytes (``StreamStallBudget``): the relay never sees the rest, the `streamEnd`
/// included, and the far end waits.
///
/// It sits between the frame decoder and the connection's ``StreamSplice``, and is added only
/// while the fault is set (``FrameServer/Connection/stallStreams(afterBytes:)``): the splice
/// knows no faults.
final class StreamStallHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = EncodedFrame
    typealias InboundOut = EncodedFrame

    private var budget: StreamStallBudget

    init(budget: Int) { self.budget = StreamStallBudget(bytes: budget) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch budget.received(frame.kind, payloadBytes: frame.payloadCount) {
        case .pass:
            context.fireChannelRead(data)
        case .passPrefix(let count):
            let payload = frame.payload
            let prefix = payload.getSlice(at: payload.readerIndex, length: count)!
            context.fireChannelRead(wrapInboundOut(EncodedFrame(kind: .streamData, payload: prefix, allocator: context.channel.allocator)))
        case .drop:
            break
        }
    }
}

extension Channel {
    /// Fault injection: from now on, stream data read from this channel stops after `budget`
    /// bytes (``StreamStallHandler``, put in front of the channel's splice).
    func stallStreams(afterBytes budget: Int) async throws {
        try await eventLoop.submit {
            let sync = self.pipeline.syncOperations
            let splice = try sync.handler(type: StreamSpliceHandler.self)
            try sync.addHandler(StreamStallHandler(budget: budget), position: .before(splice))
        }.get()
    }
}

extension FrameServer.Connection {
    /// Fault injection (`faults.stallStreamAfterBytes`): from now on, stream data read from this
    /// connection stops after `budget` bytes, as from an app that hangs mid-stream: what its
    /// splice relays stops there, `streamEnd` included. Call before joining the splice.
    ///
    /// - Throws: when the connection has closed.
    public func stallStreams(afterBytes budget: Int) async throws {
        guard let faultSite else { return try await splice.channel.stallStreams(afterBytes: budget) }
        try await faultSite.stallStreams(afterBytes: budget)
    }
}

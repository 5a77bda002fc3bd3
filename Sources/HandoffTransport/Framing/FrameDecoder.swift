import HandoffCore
import NIOCore

/// Splits inbound bytes into ``EncodedFrame``s. Each header is checked against ``FrameLimits``
/// as soon as its five bytes arrive, so an oversized frame is refused before any of its payload
/// is buffered.
///
/// A frame that arrives whole within one read is passed on as a slice of that read, without a
/// copy. Only a frame split across reads is assembled, in a buffer sized for it once its header
/// is known: so a relay copies at most the one frame that straddles each read, where a
/// cumulating decoder (NIO's `ByteToMessageHandler`) would copy every read that follows a partial
/// frame.
///
/// After a refused header the error is fired, and everything that arrives later is dropped; the
/// channel's owner closes it.
public final class FrameDecoder: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = ByteBuffer
    public typealias InboundOut = EncodedFrame

    public let limits: FrameLimits
    /// While its connection is not authenticated, frames are held to a small size.
    let gate: AuthenticationGate?

    private enum State {
        /// Between frames.
        case idle
        /// Part of a frame has arrived: its header is known once five bytes are here.
        case partial(ByteBuffer)
        /// A header was refused: nothing more is read.
        case failed
    }

    private var state = State.idle

    public init(limits: FrameLimits) {
        self.limits = limits
        self.gate = nil
    }

    init(limits: FrameLimits, gate: AuthenticationGate?) {
        self.limits = limits
        self.gate = gate
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var input = unwrapInboundIn(data)
        do {
            switch state {
            case .failed:
                return
            case .partial(var frame):
                state = .idle  // so that `frame` is the only reference while it grows
                guard let whole = try complete(&frame, from: &input) else {
                    state = .partial(frame)
                    return
                }
                context.fireChannelRead(wrapInboundOut(whole))
                if case .failed = state { return }
            case .idle:
                break
            }
            while input.readableBytes >= Frame.headerSize {
                let length = try checkedLength(at: input.readerIndex, in: input)
                guard input.readableBytes >= Frame.headerSize + length else { break }
                // A slice of the read: the payload is not copied.
                context.fireChannelRead(wrapInboundOut(EncodedFrame(validated: input.readSlice(length: Frame.headerSize + length)!)))
                if case .failed = state { return }
            }
            if input.readableBytes > 0 {
                // The start of a frame: copied into a buffer of its own, with room for all of it
                // when the header is here.
                let capacity = input.readableBytes >= Frame.headerSize
                    ? Frame.headerSize + (try checkedLength(at: input.readerIndex, in: input)) : Frame.headerSize
                var frame = context.channel.allocator.buffer(capacity: capacity)
                frame.writeBuffer(&input)
                state = .partial(frame)
            }
        } catch {
            state = .failed
            context.fireErrorCaught(error)
        }
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        state = .failed
    }

    /// Appends what `frame` lacks from `input`; returns the frame once it is whole.
    private func complete(_ frame: inout ByteBuffer, from input: inout ByteBuffer) throws -> EncodedFrame? {
        if frame.readableBytes < Frame.headerSize {
            var head = input.readSlice(length: min(Frame.headerSize - frame.readableBytes, input.readableBytes))!
            frame.writeBuffer(&head)
            guard frame.readableBytes == Frame.headerSize else { return nil }
            frame.reserveCapacity(minimumWritableBytes: try checkedLength(at: frame.readerIndex, in: frame))
        }
        let length = Frame.headerSize + Int(frame.getInteger(at: frame.readerIndex + 1, endianness: .big, as: UInt32.self)!)
        var part = input.readSlice(length: min(length - frame.readableBytes, input.readableBytes))!
        frame.writeBuffer(&part)
        return frame.readableBytes == length ? EncodedFrame(validated: frame) : nil
    }

    /// The payload length in the header at `index`, once the header passes the limits.
    private func checkedLength(at index: Int, in buffer: ByteBuffer) throws(FrameError) -> Int {
        let kind = buffer.getInteger(at: index, as: UInt8.self)!
        let length = Int(buffer.getInteger(at: index + 1, endianness: .big, as: UInt32.self)!)
        let header = FrameHeader(kind: FrameKind(rawValue: kind), length: length)
        try limits.check(header)
        if let gate, !gate.isAuthenticated, length > gate.maxFrameBytesBeforeAuthentication {
            throw FrameError.frameTooLarge(kind: header.kind, declared: length, limit: gate.maxFrameBytesBeforeAuthentication)
        }
        return length
    }
}

/// Writes ``EncodedFrame``s: their bytes go out as they are, one buffer per frame.
public final class FrameEncoder: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    public typealias OutboundIn = EncodedFrame
    public typealias OutboundOut = ByteBuffer

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(wrapOutboundOut(unwrapOutboundIn(data).bytes), promise: promise)
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Adds the frame codec (``FrameDecoder``, ``FrameEncoder``) and, unless `messages` is
    /// false, a ``FrameMessageHandler``: handlers added after it read and write ``Frame``s;
    /// without it, ``EncodedFrame``s.
    public func addFrameCodec(limits: FrameLimits, messages: Bool = true) throws {
        try addFrameCodec(limits: limits, gate: nil, messages: messages)
    }

    func addFrameCodec(limits: FrameLimits, gate: AuthenticationGate?, messages: Bool = true) throws {
        try addHandler(FrameDecoder(limits: limits, gate: gate))
        try addHandler(FrameEncoder())
        if messages { try addHandler(FrameMessageHandler()) }
    }
}

import HandoffCore
import NIOCore

/// Splits inbound bytes into ``EncodedFrame``s. Each header is checked against ``FrameLimits``
/// as soon as its five bytes arrive, so an oversized frame is refused before any of its payload
/// is buffered.
///
/// Frames are passed on as slices of the reads they arrived in, without a copy: a frame within one
/// read as one slice, a frame split between two reads as two. Only a frame spread over three or
/// more reads, or whose header is split, is assembled, in a buffer sized for it once its header is
/// known. (NIO's cumulating `ByteToMessageHandler` copies every read that follows a partial frame.)
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
        /// The start of a frame, its header whole, as a slice of the read it arrived in.
        case head(ByteBuffer, length: Int)
        /// A frame being assembled in a buffer of its own: its header is known once five bytes are
        /// here.
        case assembling(ByteBuffer)
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
            case .head(let head, let length):
                let missing = length - head.readableBytes
                guard input.readableBytes >= missing else {
                    // A third read is needed: assemble the frame from here on.
                    var frame = context.channel.allocator.buffer(capacity: length)
                    frame.writeImmutableBuffer(head)
                    frame.writeBuffer(&input)
                    state = .assembling(frame)
                    return
                }
                state = .idle
                context.fireChannelRead(wrapInboundOut(EncodedFrame(validated: head, tail: input.readSlice(length: missing)!)))
                if case .failed = state { return }
            case .assembling(var frame):
                state = .idle  // so that `frame` is the only reference while it grows
                guard let whole = try complete(&frame, from: &input) else {
                    state = .assembling(frame)
                    return
                }
                context.fireChannelRead(wrapInboundOut(whole))
                if case .failed = state { return }
            case .idle:
                break
            }
            while input.readableBytes >= Frame.headerSize {
                let length = Frame.headerSize + (try checkedLength(at: input.readerIndex, in: input))
                guard input.readableBytes >= length else {
                    // The rest comes in a later read: keep this part where it is.
                    state = .head(input.readSlice(length: input.readableBytes)!, length: length)
                    return
                }
                context.fireChannelRead(wrapInboundOut(EncodedFrame(validated: input.readSlice(length: length)!)))
                if case .failed = state { return }
            }
            if input.readableBytes > 0 {
                // Part of a header: copied, and the frame assembled once the header is whole.
                var frame = context.channel.allocator.buffer(capacity: Frame.headerSize)
                frame.writeBuffer(&input)
                state = .assembling(frame)
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

/// Writes ``EncodedFrame``s: their bytes go out as they are, in the one or two buffers they came in.
public final class FrameEncoder: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    public typealias OutboundIn = EncodedFrame
    public typealias OutboundOut = ByteBuffer

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        if let tail = frame.tail {
            context.write(wrapOutboundOut(frame.head), promise: nil)
            context.write(wrapOutboundOut(tail), promise: promise)
        } else {
            context.write(wrapOutboundOut(frame.head), promise: promise)
        }
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

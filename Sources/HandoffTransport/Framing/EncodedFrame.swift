import HandoffCore
import NIOCore

/// A frame as it is on the wire: header and payload in one `ByteBuffer`.
///
/// This is what the frame codec reads and writes. The decoder hands out slices of the bytes it
/// read and the encoder writes them as they are, so a relayed stream frame crosses an agent
/// without its payload being copied, and an app's stream output writes the caller's bytes once,
/// straight into the frames. Code that works with messages converts to and from ``Frame``
/// (``FrameMessageHandler`` does so for a channel's async side).
public struct EncodedFrame: Sendable, Hashable {
    /// The header and the payload, as the buffer's readable bytes.
    public let bytes: ByteBuffer

    /// Wraps bytes that are one whole frame whose header has been checked (the decoder's slices).
    init(validated bytes: ByteBuffer) {
        assert(bytes.readableBytes >= Frame.headerSize)
        self.bytes = bytes
    }

    /// Encodes a frame into a new buffer.
    public init(_ frame: Frame, allocator: ByteBufferAllocator) {
        var buffer = allocator.buffer(capacity: Frame.headerSize + frame.payload.count)
        buffer.writeFrameHeader(kind: frame.kind, payloadCount: frame.payload.count)
        buffer.writeBytes(frame.payload)
        bytes = buffer
    }

    /// Encodes a frame of `kind` around a copy of `payload`, in a new buffer.
    public init(kind: FrameKind, payload: ByteBuffer, allocator: ByteBufferAllocator) {
        var buffer = allocator.buffer(capacity: Frame.headerSize + payload.readableBytes)
        buffer.writeFrameHeader(kind: kind, payloadCount: payload.readableBytes)
        buffer.writeImmutableBuffer(payload)
        bytes = buffer
    }

    /// The frames written back to back in `buffer` (``ByteBuffer/writeFrame(kind:payload:)``), as
    /// slices of it. Take them once the buffer is written: writing to a buffer that slices share
    /// copies it.
    public static func frames(in buffer: ByteBuffer) -> [EncodedFrame] {
        var frames: [EncodedFrame] = []
        var offset = buffer.readerIndex
        while offset < buffer.writerIndex {
            let length = Int(buffer.getInteger(at: offset + 1, endianness: .big, as: UInt32.self)!)
            frames.append(EncodedFrame(validated: buffer.getSlice(at: offset, length: Frame.headerSize + length)!))
            offset += Frame.headerSize + length
        }
        return frames
    }

    /// The frame's kind.
    public var kind: FrameKind {
        FrameKind(rawValue: bytes.getInteger(at: bytes.readerIndex, as: UInt8.self)!)
    }

    /// The length of the payload.
    public var payloadCount: Int { bytes.readableBytes - Frame.headerSize }

    /// The payload, a slice of ``bytes`` (no copy).
    public var payload: ByteBuffer {
        bytes.getSlice(at: bytes.readerIndex + Frame.headerSize, length: payloadCount)!
    }

    /// The frame as a message; copies the payload into an array.
    public var frame: Frame {
        Frame(kind: kind, payload: bytes.getBytes(at: bytes.readerIndex + Frame.headerSize, length: payloadCount)!)
    }
}

extension ByteBuffer {
    /// Writes a frame header: the kind, then the payload's length as a big-endian UInt32.
    /// Returns the number of bytes written (``Frame/headerSize``).
    @discardableResult
    public mutating func writeFrameHeader(kind: FrameKind, payloadCount: Int) -> Int {
        precondition(payloadCount >= 0 && payloadCount <= Int(UInt32.max), "a frame's payload is at most 4 GiB")
        return writeInteger(kind.rawValue) + writeInteger(UInt32(payloadCount), endianness: .big)
    }

    /// Appends a whole frame: its header, then a copy of `payload`. ``EncodedFrame/frames(in:)``
    /// then splits a buffer of such frames without copying them.
    public mutating func writeFrame(kind: FrameKind, payload: some Collection<UInt8>) {
        writeFrameHeader(kind: kind, payloadCount: payload.count)
        writeBytes(payload)
    }
}

/// Converts between a channel's ``EncodedFrame``s and the ``Frame`` messages its async side (or
/// any handler after it) reads and writes. ``ChannelPipeline/SynchronousOperations/addFrameCodec(limits:)``
/// adds it after the codec.
public final class FrameMessageHandler: ChannelDuplexHandler, RemovableChannelHandler, Sendable {
    public typealias InboundIn = EncodedFrame
    public typealias InboundOut = Frame
    public typealias OutboundIn = Frame
    public typealias OutboundOut = EncodedFrame

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(wrapInboundOut(unwrapInboundIn(data).frame))
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(wrapOutboundOut(EncodedFrame(unwrapOutboundIn(data), allocator: context.channel.allocator)), promise: promise)
    }
}

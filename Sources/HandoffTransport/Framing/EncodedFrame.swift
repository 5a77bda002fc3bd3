import HandoffCore
import NIOCore

/// A frame as it is on the wire: its header and payload, kept in the `ByteBuffer`s they were read
/// into or written to.
///
/// This is what the frame codec reads and writes. The decoder hands out slices of the bytes it
/// read (a frame split between two reads keeps both parts) and the encoder writes them as they
/// are, so a relayed stream frame crosses an agent without its payload being copied, and an app's
/// stream output writes the caller's bytes once, straight into the frames. Code that works with
/// messages converts to and from ``Frame`` (``FrameMessageHandler`` does so for a channel's async
/// side).
public struct EncodedFrame: Sendable {
    private enum Storage {
        case whole(ByteBuffer)
        /// Boxed, so that a frame stays the size of one ByteBuffer and fits a `NIOAny` without an
        /// allocation: only split frames pay for one.
        case split(Split)
    }

    private final class Split: Sendable {
        let head: ByteBuffer
        let tail: ByteBuffer
        init(head: ByteBuffer, tail: ByteBuffer) {
            self.head = head
            self.tail = tail
        }
    }

    private let storage: Storage

    /// The header and the payload; or, for a frame that arrived split between two reads, the
    /// header and the start of the payload, with the rest in `tail`.
    var head: ByteBuffer {
        switch storage {
        case .whole(let bytes): bytes
        case .split(let split): split.head
        }
    }

    /// The end of the payload of a frame split between two reads, or nil.
    var tail: ByteBuffer? {
        switch storage {
        case .whole: nil
        case .split(let split): split.tail
        }
    }

    /// Wraps bytes that are one whole frame whose header has been checked (the decoder's slices).
    init(validated head: ByteBuffer, tail: ByteBuffer? = nil) {
        assert(head.readableBytes >= Frame.headerSize)
        storage = if let tail { .split(Split(head: head, tail: tail)) } else { .whole(head) }
    }

    /// Encodes a frame into a new buffer.
    public init(_ frame: Frame, allocator: ByteBufferAllocator) {
        var buffer = allocator.buffer(capacity: Frame.headerSize + frame.payload.count)
        buffer.writeFrame(kind: frame.kind, payload: frame.payload)
        self.init(validated: buffer)
    }

    /// Encodes a frame of `kind` around a copy of `payload`, in a new buffer.
    public init(kind: FrameKind, payload: ByteBuffer, allocator: ByteBufferAllocator) {
        var buffer = allocator.buffer(capacity: Frame.headerSize + payload.readableBytes)
        buffer.writeFrameHeader(kind: kind, payloadCount: payload.readableBytes)
        buffer.writeImmutableBuffer(payload)
        self.init(validated: buffer)
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
        FrameKind(rawValue: head.getInteger(at: head.readerIndex, as: UInt8.self)!)
    }

    /// The length of the payload.
    public var payloadCount: Int { head.readableBytes + (tail?.readableBytes ?? 0) - Frame.headerSize }

    /// The header and the payload in one buffer: the frame's own, or a copy of its two parts.
    public var bytes: ByteBuffer {
        guard var tail else { return head }
        var joined = head
        joined.writeBuffer(&tail)
        return joined
    }

    /// The payload, a slice of the frame's buffer (a copy when the frame arrived in two parts).
    public var payload: ByteBuffer {
        let bytes = self.bytes
        return bytes.getSlice(at: bytes.readerIndex + Frame.headerSize, length: payloadCount)!
    }

    /// The payload as slices of the buffers it arrived in, never copied: one part, or two when the
    /// frame arrived split between two reads (a file sink writes and hashes them as they are).
    public var payloadParts: (first: ByteBuffer, second: ByteBuffer?) {
        (head.getSlice(at: head.readerIndex + Frame.headerSize, length: head.readableBytes - Frame.headerSize)!, tail)
    }

    /// The payload copied into an array, from either part.
    public var payloadBytes: [UInt8] {
        guard let tail else { return head.getBytes(at: head.readerIndex + Frame.headerSize, length: payloadCount)! }
        var out: [UInt8] = []
        out.reserveCapacity(payloadCount)
        out.append(contentsOf: head.readableBytesView.dropFirst(Frame.headerSize))
        out.append(contentsOf: tail.readableBytesView)
        return out
    }

    /// The frame as a message; copies the payload into an array.
    public var frame: Frame { Frame(kind: kind, payload: payloadBytes) }
}

extension EncodedFrame: Hashable {
    /// Frames are equal when their bytes are, however they are split.
    public static func == (lhs: EncodedFrame, rhs: EncodedFrame) -> Bool { lhs.bytes == rhs.bytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
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

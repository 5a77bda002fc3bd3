import HandoffCore
import NIOCore

/// Splits inbound bytes into ``Frame``s. Each header is checked against ``FrameLimits`` as soon as
/// its five bytes arrive, so an oversized frame is refused before any of its payload is buffered.
public struct FrameDecoder: ByteToMessageDecoder, Sendable {
    public typealias InboundOut = Frame

    public var limits: FrameLimits
    /// While its connection is not authenticated, frames are held to a small size.
    let gate: AuthenticationGate?

    public init(limits: FrameLimits) {
        self.limits = limits
        self.gate = nil
    }

    init(limits: FrameLimits, gate: AuthenticationGate?) {
        self.limits = limits
        self.gate = gate
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try decodeFrame(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while let frame = try decodeFrame(from: &buffer) {
            context.fireChannelRead(Self.wrapInboundOut(frame))
        }
        return .needMoreData
    }

    /// Reads one frame if it is complete; throws ``FrameError`` on a refused header.
    func decodeFrame(from buffer: inout ByteBuffer) throws -> Frame? {
        // Read with getInteger: no collection view, so checking the header on every read
        // allocates nothing.
        guard buffer.readableBytes >= Frame.headerSize,
              let kind = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self),
              let length = buffer.getInteger(at: buffer.readerIndex + 1, endianness: .big, as: UInt32.self)
        else { return nil }
        let header = FrameHeader(kind: FrameKind(rawValue: kind), length: Int(length))
        try limits.check(header)
        if let gate, !gate.isAuthenticated, header.length > gate.maxFrameBytesBeforeAuthentication {
            throw FrameError.frameTooLarge(kind: header.kind, declared: header.length, limit: gate.maxFrameBytesBeforeAuthentication)
        }
        guard buffer.readableBytes - Frame.headerSize >= header.length else {
            // Room for the whole frame at once (its length has passed the checks above): the
            // reads that complete it are appended without the buffer growing by doubling, so a
            // frame costs the same allocations however many reads bring it.
            buffer.reserveCapacity(minimumWritableBytes: Frame.headerSize + header.length - buffer.readableBytes)
            return nil
        }
        buffer.moveReaderIndex(forwardBy: Frame.headerSize)
        let payload = buffer.readBytes(length: header.length)!
        return Frame(kind: header.kind, payload: payload)
    }
}

/// Writes ``Frame``s as header plus payload.
public struct FrameEncoder: MessageToByteEncoder, Sendable {
    public typealias OutboundIn = Frame

    public init() {}

    public func encode(data: Frame, out: inout ByteBuffer) throws {
        out.reserveCapacity(out.writerIndex + Frame.headerSize + data.payload.count)
        out.writeInteger(data.kind.rawValue)
        out.writeInteger(UInt32(data.payload.count), endianness: .big)
        out.writeBytes(data.payload)
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Adds the frame decoder and encoder.
    public func addFrameCodec(limits: FrameLimits) throws {
        try addFrameCodec(limits: limits, gate: nil)
    }

    func addFrameCodec(limits: FrameLimits, gate: AuthenticationGate?) throws {
        try addHandler(ByteToMessageHandler(FrameDecoder(limits: limits, gate: gate)))
        try addHandler(MessageToByteHandler(FrameEncoder()))
    }
}

/// Splits a byte stream into frames, checking each header against ``FrameLimits`` before the
/// payload is buffered. Transport-free: the NIO decoder applies the same header rules to a
/// ByteBuffer; this one serves tests, fuzzing and in-process transports.
public struct FrameParser: Sendable {
    public var limits: FrameLimits
    private var buffer: [UInt8] = []
    private var start = 0

    public init(limits: FrameLimits) { self.limits = limits }

    /// Adds received bytes.
    public mutating func append<S: Sequence<UInt8>>(_ bytes: S) {
        if start > 4096, start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The bytes received but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - start }

    /// The next complete frame, nil if more bytes are needed. Throws as soon as a header is
    /// refused, before its payload arrives.
    public mutating func next() throws(FrameError) -> Frame? {
        guard buffer.count - start >= Frame.headerSize else { return nil }
        let header = FrameHeader(bytes: buffer[start..<(start + Frame.headerSize)])
        try limits.check(header)
        guard buffer.count - start - Frame.headerSize >= header.length else { return nil }
        let bodyStart = start + Frame.headerSize
        let frame = Frame(kind: header.kind, payload: Array(buffer[bodyStart..<(bodyStart + header.length)]))
        start = bodyStart + header.length
        return frame
    }
}

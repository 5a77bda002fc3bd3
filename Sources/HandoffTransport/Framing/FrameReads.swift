import NIOCore

/// How framed connections read: peer and control connections, on both sides, the listener's and
/// the connectors' alike (they may carry a relayed stream).
enum FrameReads {
    /// Buffers that adapt to what arrives, up to 256 KiB (NIO's default stops at 64 KiB), so a
    /// busy stream is read several frames per system call, and never under 8 KiB, so that a frame
    /// with an activity (a publish on the control socket, a fetch's reply: a few KB) is read in
    /// one system call and one pass through the pipeline. With a floor of 64 bytes and 2 KiB to
    /// start, a 3 KB activity took two reads (2048 bytes, then the rest after another wait for
    /// readiness). The floor costs one 8 KiB buffer per open connection.
    static let recvAllocator = AdaptiveRecvByteBufferAllocator(minimum: 8192, initial: 8192, maximum: 256 * 1024)
}

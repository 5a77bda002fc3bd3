// Micro benchmarks of HandoffTransport's NIO frame codec (FrameDecoder / FrameEncoder, with the
// FrameMessageHandler, as the agent installs them with `addFrameCodec(limits:)`), driven through
// EmbeddedChannels.
//
// "Relay" benchmarks: the relay of one continuation-stream chunk exactly as the agents do it: two
// channels on one loop, each with the codec and a StreamSplice, joined as an agent joins an app's
// connection and a peer's. A streamData frame read on one channel goes through its FrameDecoder
// and splice to the other's splice and FrameEncoder -- a ByteBuffer in, a ByteBuffer out.
// Allocations per relayed chunk must not depend on the chunk size (O(1)): compare the
// mallocCountTotal of the 16 KiB, 64 KiB and 256 KiB variants. A frame that arrives in one read is
// passed on as a slice of it (no copy), one split between two reads as its two slices; one spread
// over more reads is assembled once, in a buffer sized for it when its header arrives.
//
// Each benchmark iteration is one frame or chunk, so mallocCountTotal reads as "mallocs per op".

import Benchmark
import HandoffTestSupport
import HandoffCore
import HandoffTransport
import NIOCore
import NIOEmbedded

/// Tolerances for `swift package benchmark thresholds check` (compared at p90 with the files in
/// Thresholds/). Malloc counts are deterministic and must not change at all. Times are not: on a
/// shared 2-core machine they swing by more than 2x within minutes as other builds come and go,
/// so only a 4x slowdown fails (tighten these on a dedicated benchmark machine).
func transportThresholds() -> [BenchmarkMetric: BenchmarkThresholds] {
    [
        .wallClock: .init(relative: [.p90: 300.0]),  // fails at 4x slower
        .throughput: .init(relative: [.p90: 300.0]),  // (wall clock covers slowdowns)
        .mallocCountTotal: .init(absolute: [.p90: 0]),
    ]
}

func transportConfiguration() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        warmupIterations: 100,
        maxDuration: .seconds(1),
        maxIterations: 50_000,
        thresholds: transportThresholds()
    )
}

/// An EmbeddedChannel with the agent's frame codec (frames in, frames out).
func makeChannel(limits: FrameLimits) -> EmbeddedChannel {
    let channel = EmbeddedChannel()
    try! channel.pipeline.syncOperations.addFrameCodec(limits: limits)
    return channel
}

/// Two channels on one loop with the agent's codec and splices, joined: stream frames read on
/// `from` are written to `to`, as the agents relay continuation streams.
struct SplicedPair {
    let from: EmbeddedChannel
    let to: EmbeddedChannel

    init(limits: FrameLimits) {
        let loop = EmbeddedEventLoop()
        from = EmbeddedChannel(loop: loop)
        to = EmbeddedChannel(loop: loop)
        var splices: [StreamSplice] = []
        for (channel, holding) in [(from, false), (to, true)] {
            try! channel.pipeline.syncOperations.addFrameCodec(limits: limits)
            splices.append(try! StreamSplice.add(to: channel, holding: holding))
            try! channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        }
        try! StreamSplice.joinOnLoop(splices[0], StreamSpliceDirection(), firstFrame: nil,
                                     splices[1], StreamSpliceDirection(), firstFrame: nil, onEnd: { _ in })
    }

    func finish() {
        _ = try? from.finish()
        _ = try? to.finish()
    }
}

/// `whole` cut into reads of `size` bytes, each in storage of its own.
func pieces(of whole: ByteBuffer, size: Int) -> [ByteBuffer] {
    var out: [ByteBuffer] = []
    var offset = 0
    while offset < whole.readableBytes {
        let n = min(size, whole.readableBytes - offset)
        var piece = ByteBufferAllocator().buffer(capacity: n)
        piece.writeImmutableBuffer(whole.getSlice(at: whole.readerIndex + offset, length: n)!)
        out.append(piece)
        offset += n
    }
    return out
}

/// Passes every read on untouched: the EmbeddedChannel harness alone, to subtract its cost.
final class SinkHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

/// The wire bytes of a frame, as a ByteBuffer.
func wireBuffer(_ frame: Frame, allocator: ByteBufferAllocator = .init()) -> ByteBuffer {
    var buffer = allocator.buffer(capacity: Frame.headerSize + frame.payload.count)
    buffer.writeBytes(frame.bytes)
    return buffer
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = transportConfiguration()

    let userInfoFrame = Frame(kind: .userInfo, payload: PropertyListBinaryCoding.encode(BenchmarkFixtures.userInfo()))
    let peerLimits = FrameLimits(maxUserInfoBytes: 3072)

    // MARK: NIO frame codec, one 3 KB userInfo frame

    Benchmark("NIO-FrameEncoder-3KB-userInfo-frame") { benchmark in
        let channel = makeChannel(limits: peerLimits)
        defer { _ = try? channel.finish() }
        try channel.writeOutbound(userInfoFrame)  // warm the channel's buffers up
        _ = try channel.readOutbound(as: ByteBuffer.self)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try channel.writeOutbound(userInfoFrame)
            blackHole(try channel.readOutbound(as: ByteBuffer.self))
        }
        benchmark.stopMeasurement()
    }

    Benchmark("NIO-FrameDecoder-3KB-userInfo-frame") { benchmark in
        let channel = makeChannel(limits: peerLimits)
        defer { _ = try? channel.finish() }
        let input = wireBuffer(userInfoFrame)
        try channel.writeInbound(input)  // warm the channel's buffers up
        _ = try channel.readInbound(as: Frame.self)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try channel.writeInbound(input)
            blackHole(try channel.readInbound(as: Frame.self))
        }
        benchmark.stopMeasurement()
    }

    // Parsing a 5-byte header from a ByteBufferView in another module. FrameHeader.init(bytes:)
    // is generic over Collection; it is @inlinable, so it is specialized here and allocates
    // nothing (unspecialized it made 5 mallocs per call). FrameDecoder itself reads the header
    // with ByteBuffer.getInteger.
    let firstRead = pieces(of: wireBuffer(Frame(kind: .activity, payload: BenchmarkFixtures.payload(64 << 10))), size: 16 << 10)[0]
    Benchmark("FrameHeader-from-ByteBufferView-per-read") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(FrameHeader(bytes: firstRead.viewBytes(at: firstRead.readerIndex, length: Frame.headerSize)!))
        }
    }

    // MARK: Relay of one stream chunk (what continuation streams do)

    // The harness's own cost per read: one 16 KiB ByteBuffer through EmbeddedChannel.writeInbound
    // into a handler that drops it (no codec).
    Benchmark("Harness-writeInbound-16KiB-read-no-codec") { benchmark in
        let channel = EmbeddedChannel(handler: SinkHandler())
        defer { _ = try? channel.finish() }
        let read = pieces(of: wireBuffer(Frame(kind: .activity, payload: BenchmarkFixtures.payload(16 << 10 - 5))), size: 16 << 10)[0]
        try channel.writeInbound(read)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try channel.writeInbound(read)
        }
        benchmark.stopMeasurement()
    }

    // Stream chunks are not userInfo: up to 256 KiB here, so the limit is raised for the relay.
    let relayLimits = FrameLimits(maxFrameBytes: 1 << 20, maxUserInfoBytes: 3072)
    for size in [16 << 10, 64 << 10, 256 << 10] {
        let chunk = Frame(kind: .streamData, payload: BenchmarkFixtures.payload(size))
        let label = "\(size >> 10)KiB"

        // The whole frame arrives in one read: a ByteBuffer in, a ByteBuffer out.
        Benchmark("Relay-chunk-\(label)-one-read") { benchmark in
            let pair = SplicedPair(limits: relayLimits)
            defer { pair.finish() }
            let input = wireBuffer(chunk)
            try pair.from.writeInbound(input)  // warm the channels' buffers up
            _ = try pair.to.readOutbound(as: ByteBuffer.self)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try pair.from.writeInbound(input)
                guard var out = try pair.to.readOutbound(as: ByteBuffer.self) else { fatalError("no output") }
                precondition(out.readableBytes == Frame.headerSize + size)
                out.moveReaderIndex(forwardBy: 1)
                blackHole(out)
            }
            benchmark.stopMeasurement()
        }

        // The frame arrives as TCP would deliver it: in 16 KiB reads, each a ByteBuffer of its own
        // (as NIO's socket reads are), which the decoder assembles into one frame.
        let readSize = 16 << 10
        let whole = wireBuffer(chunk)
        Benchmark("Relay-chunk-\(label)-in-16KiB-reads") { benchmark in
            let pair = SplicedPair(limits: relayLimits)
            defer { pair.finish() }
            for piece in pieces(of: whole, size: readSize) { try pair.from.writeInbound(piece) }  // warm up
            while try pair.to.readOutbound(as: ByteBuffer.self) != nil {}
            // Reversed, so popLast hands each read over without another reference to its storage
            // (a socket read's buffer is uniquely owned when the decoder reads it).
            var reads = Array(pieces(of: whole, size: readSize).reversed())
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                while let piece = reads.popLast() { try pair.from.writeInbound(piece) }
                // One buffer, or two for a frame that arrived split between two reads.
                var written = 0
                while let out = try pair.to.readOutbound(as: ByteBuffer.self) {
                    written += out.readableBytes
                    blackHole(out)
                }
                precondition(written == Frame.headerSize + size)
            }
            benchmark.stopMeasurement()
        }
    }
}

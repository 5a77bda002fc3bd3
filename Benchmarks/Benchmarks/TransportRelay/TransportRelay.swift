// Micro benchmarks of HandoffTransport's NIO frame codec (FrameDecoder / FrameEncoder, as the
// agent installs them with `addFrameCodec(limits:)`), driven through an EmbeddedChannel.
//
// "Relay" benchmarks: continuation streams do not exist yet. What the relay of one stream chunk
// will cost is measured here as what it will be made of: one frame of N bytes through the NIO
// frame decoder and straight back out through the encoder -- a ByteBuffer in, a ByteBuffer out.
// Allocations per relayed chunk must not depend on the chunk size (O(1)): compare the
// mallocCountTotal of the 16 KiB, 64 KiB and 256 KiB variants.
//
// Each benchmark iteration is one frame or chunk, so mallocCountTotal reads as "mallocs per op".

import Benchmark
import BenchSupport
import HandoffCore
import HandoffTransport
import NIOCore
import NIOEmbedded

let transportThresholds: [BenchmarkMetric: BenchmarkThresholds] = [
    .wallClock: .init(relative: [.p90: 50.0]),
    .throughput: .init(relative: [.p90: 50.0]),
    .mallocCountTotal: .init(absolute: [.p90: 0]),
]

let transportConfiguration = Benchmark.Configuration(
    metrics: [.wallClock, .mallocCountTotal, .throughput],
    warmupIterations: 100,
    maxDuration: .seconds(1),
    maxIterations: 50_000,
    thresholds: transportThresholds
)

/// Writes every decoded frame straight back out: the relay of a stream chunk.
final class RelayHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = Frame
    typealias OutboundOut = Frame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.writeAndFlush(data, promise: nil)
    }
}

/// An EmbeddedChannel with the agent's frame codec, optionally followed by the relay handler.
func makeChannel(limits: FrameLimits, relay: Bool) -> EmbeddedChannel {
    let channel = EmbeddedChannel()
    try! channel.pipeline.syncOperations.addFrameCodec(limits: limits)
    if relay { try! channel.pipeline.syncOperations.addHandler(RelayHandler()) }
    return channel
}

/// The wire bytes of a frame, as a ByteBuffer.
func wireBuffer(_ frame: Frame, allocator: ByteBufferAllocator = .init()) -> ByteBuffer {
    var buffer = allocator.buffer(capacity: Frame.headerSize + frame.payload.count)
    buffer.writeBytes(frame.bytes)
    return buffer
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = transportConfiguration

    let userInfoFrame = Frame(kind: .userInfo, payload: PropertyListBinaryCoding.encode(Fixtures.userInfo()))
    let peerLimits = FrameLimits(maxUserInfoBytes: 3072)

    // MARK: NIO frame codec, one 3 KB userInfo frame

    Benchmark("NIO FrameEncoder (3 KB userInfo frame)") { benchmark in
        let channel = makeChannel(limits: peerLimits, relay: false)
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

    Benchmark("NIO FrameDecoder (3 KB userInfo frame)") { benchmark in
        let channel = makeChannel(limits: peerLimits, relay: false)
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

    // MARK: Relay of one stream chunk (what continuation streams will do)

    // Stream chunks are not userInfo: up to 256 KiB here, so the limit is raised for the relay.
    let relayLimits = FrameLimits(maxFrameBytes: 1 << 20, maxUserInfoBytes: 3072)
    for size in [16 << 10, 64 << 10, 256 << 10] {
        let chunk = Frame(kind: .activity, payload: Fixtures.payload(size))
        let label = "\(size >> 10) KiB"

        // The whole frame arrives in one read: a ByteBuffer in, a ByteBuffer out.
        Benchmark("Relay chunk \(label) (one read)") { benchmark in
            let channel = makeChannel(limits: relayLimits, relay: true)
            defer { _ = try? channel.finish() }
            let input = wireBuffer(chunk)
            try channel.writeInbound(input)  // warm the channel's buffers up
            _ = try channel.readOutbound(as: ByteBuffer.self)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try channel.writeInbound(input)
                guard var out = try channel.readOutbound(as: ByteBuffer.self) else { fatalError("no output") }
                precondition(out.readableBytes == Frame.headerSize + size)
                out.moveReaderIndex(forwardBy: 1)
                blackHole(out)
            }
            benchmark.stopMeasurement()
        }

        // The frame arrives as TCP would deliver it: in 16 KiB reads, which the decoder must
        // accumulate before the frame is complete.
        let readSize = 16 << 10
        Benchmark("Relay chunk \(label) (16 KiB reads)") { benchmark in
            let channel = makeChannel(limits: relayLimits, relay: true)
            defer { _ = try? channel.finish() }
            let whole = wireBuffer(chunk)
            var pieces: [ByteBuffer] = []
            var offset = 0
            while offset < whole.readableBytes {
                let n = min(readSize, whole.readableBytes - offset)
                pieces.append(whole.getSlice(at: offset, length: n)!)
                offset += n
            }
            for piece in pieces { try channel.writeInbound(piece) }  // warm the channel's buffers up
            _ = try channel.readOutbound(as: ByteBuffer.self)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                for piece in pieces { try channel.writeInbound(piece) }
                guard let out = try channel.readOutbound(as: ByteBuffer.self) else { fatalError("no output") }
                precondition(out.readableBytes == Frame.headerSize + size)
                blackHole(out)
            }
            benchmark.stopMeasurement()
        }
    }
}

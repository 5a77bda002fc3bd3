import HandoffCore
@testable import HandoffTransport
import NIOCore
import NIOEmbedded
import Synchronization
import Testing

/// Counts the reads that pass the splice toward the socket.
final class ReadCounter: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = NIOAny
    private let count = Atomic(0)
    var reads: Int { count.load(ordering: .relaxed) }

    func read(context: ChannelHandlerContext) {
        count.add(1, ordering: .relaxed)
        context.read()
    }
}

/// What the pair's `onEnd` was told, in order.
final class EndLog: Sendable {
    private let ends = Mutex<[StreamDirectionEnd?]>([])
    var all: [StreamDirectionEnd?] { ends.withLock { $0 } }
    func record(_ end: StreamDirectionEnd?) { ends.withLock { $0.append(end) } }
}

/// Stands in for the frame codec at the head of a test pipeline: frames written inbound are
/// encoded for the splice, and what the splice writes is decoded back, so tests speak ``Frame``.
final class TestWire: ChannelDuplexHandler, Sendable {
    typealias InboundIn = Frame
    typealias InboundOut = EncodedFrame
    typealias OutboundIn = EncodedFrame
    typealias OutboundOut = Frame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(wrapInboundOut(EncodedFrame(unwrapInboundIn(data), allocator: context.channel.allocator)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(wrapOutboundOut(unwrapOutboundIn(data).frame), promise: promise)
    }
}

/// One side of a spliced pair: a testing channel whose pipeline is a read counter, a stand-in for
/// the codec, the splice and the message handler, as on an agent's connections.
struct SplicedChannel {
    let channel: NIOAsyncTestingChannel
    let splice: StreamSplice
    let reads: ReadCounter

    static func make(on loop: NIOAsyncTestingEventLoop, holding: Bool = false) async throws -> SplicedChannel {
        let channel = NIOAsyncTestingChannel(loop: loop)
        let reads = ReadCounter()
        let splice = try await loop.submit {
            try channel.pipeline.syncOperations.addHandlers(reads, TestWire(), FrameMessageHandler())
            return try StreamSplice.add(to: channel, holding: holding)
        }.get()
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        return SplicedChannel(channel: channel, splice: splice, reads: reads)
    }

    /// Frames written to this channel, in order.
    func written() async throws -> [Frame] {
        var frames: [Frame] = []
        while let frame = try await channel.readOutbound(as: Frame.self) { frames.append(frame) }
        return frames
    }
}

@Suite("StreamSplice: relaying stream frames between two channels on the event loop")
struct StreamSpliceTests {
    static let response = Frame(kind: .controlResponse, payload: Array(#"{"ok":true}"#.utf8))
    static func data(_ bytes: [UInt8]) -> Frame { Frame(kind: .streamData, payload: bytes) }
    static let end = Frame(kind: .streamEnd, payload: [])

    /// An app connection (passing) and a peer connection (holding) on one loop, not yet joined.
    static func unjoined() async throws -> (loop: NIOAsyncTestingEventLoop, app: SplicedChannel, peer: SplicedChannel) {
        let loop = NIOAsyncTestingEventLoop()
        return (loop, try await SplicedChannel.make(on: loop), try await SplicedChannel.make(on: loop, holding: true))
    }

    /// An app connection (passing) and a peer connection (holding), joined app first.
    static func joined(stall: Int? = nil, lastWords: (@Sendable (any Error) -> Frame?)? = nil)
        async throws -> (app: SplicedChannel, peer: SplicedChannel, ends: EndLog)
    {
        let (_, app, peer) = try await Self.unjoined()
        let ends = EndLog()
        // The stall fault as the agent sets it: a handler in front of the app's splice.
        if let stall { try await app.channel.stallStreams(afterBytes: stall) }
        try await StreamSplice.join(app.splice, StreamSpliceDirection(), firstFrame: response,
                                    peer.splice, StreamSpliceDirection(lastWords: lastWords), firstFrame: nil, onEnd: ends.record)
        #expect(try await app.written() == [response])
        return (app, peer, ends)
    }

    @Test("before it is joined, a splice passes every frame to the async side")
    func passing() async throws {
        let side = try await SplicedChannel.make(on: NIOAsyncTestingEventLoop())
        for frame in [Frame(kind: .hello, payload: [1]), Self.data([2]), Self.end] {
            try await side.channel.writeInbound(frame)
            #expect(try await side.channel.readInbound(as: Frame.self) == frame)
        }
    }

    @Test("a holding splice keeps stream frames and passes the rest; once joined, they follow the partner's first frame")
    func holding() async throws {
        let (_, app, peer) = try await Self.unjoined()
        let hello = Frame(kind: .hello, payload: [7])
        try await peer.channel.writeInbound(hello)
        try await peer.channel.writeInbound(Frame(kind: .streamAccepted, payload: []))
        try await peer.channel.writeInbound(Self.data([1, 2, 3]))
        try await peer.channel.writeInbound(Self.end)
        #expect(try await peer.channel.readInbound(as: Frame.self) == hello)
        #expect(try await peer.channel.readInbound(as: Frame.self) == Frame(kind: .streamAccepted, payload: []))
        #expect(try await peer.channel.readInbound(as: Frame.self) == nil, "stream frames are held, not passed up")
        #expect(try await app.written().isEmpty)

        let ends = EndLog()
        try await StreamSplice.join(app.splice, StreamSpliceDirection(), firstFrame: Self.response,
                                    peer.splice, StreamSpliceDirection(), firstFrame: nil, onEnd: ends.record)
        #expect(try await app.written() == [Self.response, Self.data([1, 2, 3]), Self.end])
        #expect(ends.all == [.ended])
    }

    @Test("joined: frames go both ways, and each streamEnd ends its direction once it is written")
    func bothWays() async throws {
        let (app, peer, ends) = try await Self.joined()
        try await app.channel.writeInbound(Self.data([1]))
        try await app.channel.writeInbound(Self.data([2, 2]))
        #expect(try await peer.written() == [Self.data([1]), Self.data([2, 2])])
        try await peer.channel.writeInbound(Self.data([3]))
        #expect(try await app.written() == [Self.data([3])])
        try await app.channel.writeInbound(Self.end)
        #expect(try await peer.written() == [Self.end])
        #expect(ends.all == [.ended])
        try await peer.channel.writeInbound(Self.end)
        #expect(try await app.written() == [Self.end])
        #expect(ends.all == [.ended, .ended])
        #expect(try await app.channel.readInbound(as: Frame.self) == nil, "nothing reaches the async side")
        #expect(try await peer.channel.readInbound(as: Frame.self) == nil)
    }

    @Test("the first frames go out in order, before the frames either side held meanwhile")
    func firstFramesFirst() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let peer = try await SplicedChannel.make(on: loop)
        let app = try await SplicedChannel.make(on: loop)
        let accepted = Frame(kind: .streamAccepted, payload: [])
        let ends = EndLog()
        try await StreamSplice.join(peer.splice, StreamSpliceDirection(), firstFrame: accepted,
                                    app.splice, StreamSpliceDirection(), firstFrame: Self.response, onEnd: ends.record)
        #expect(try await peer.written() == [accepted])
        #expect(try await app.written() == [Self.response])
    }

    @Test("a frame that is not stream data ends the pair with a protocol error, and is not relayed")
    func protocolError() async throws {
        let (app, peer, ends) = try await Self.joined()
        await #expect(throws: FrameError.unexpected(kind: .hello, expecting: "stream data")) {
            try await app.channel.writeInbound(Frame(kind: .hello, payload: [1]))
        }
        try await app.channel.writeInbound(Self.data([1]))
        #expect(try await peer.written().isEmpty)
        #expect(ends.all == [nil])
    }

    @Test("a connection that closes ends the pair (.closed), after what it had sent")
    func closes() async throws {
        let (app, peer, ends) = try await Self.joined()
        try await peer.channel.writeInbound(Self.data([9]))
        try await peer.channel.close()
        #expect(try await app.written() == [Self.data([9])])
        #expect(ends.all == [.closed])
    }

    @Test("a connection that closes after its streamEnd: the end is counted first, then the close")
    func closesAfterEnd() async throws {
        let (app, peer, ends) = try await Self.joined()
        try await peer.channel.writeInbound(Self.end)
        try await peer.channel.close()
        #expect(try await app.written() == [Self.end])
        #expect(ends.all == [.ended, .closed])
    }

    @Test("a holding splice whose channel closed still relays what it kept, then ends the pair")
    func heldThenClosed() async throws {
        let (_, app, peer) = try await Self.unjoined()
        try await peer.channel.writeInbound(Self.data([4, 2]))
        try await peer.channel.writeInbound(Self.end)
        try await peer.channel.close()
        let ends = EndLog()
        try await StreamSplice.join(app.splice, StreamSpliceDirection(), firstFrame: Self.response,
                                    peer.splice, StreamSpliceDirection(), firstFrame: nil, onEnd: ends.record)
        #expect(try await app.written() == [Self.response, Self.data([4, 2]), Self.end])
        #expect(ends.all == [.ended, .closed])
    }

    @Test("a splice whose channel closes between being prepared and started still relays what it held, then ends the pair")
    func closedWhileJoining() async throws {
        let (loop, app, peer) = try await Self.unjoined()
        let ends = EndLog()
        try await peer.channel.writeInbound(Self.data([5]))
        // join's two steps, with the source finishing and closing in between (as a fast source
        // agent can: it closes once both directions have ended).
        try await loop.submit {
            try app.splice.handler.value.prepare(partner: peer.splice, direction: StreamSpliceDirection(), firstFrame: Self.response, onEnd: ends.record)
            try peer.splice.handler.value.prepare(partner: app.splice, direction: StreamSpliceDirection(), firstFrame: nil, onEnd: ends.record)
        }.get()
        try await peer.channel.writeInbound(Self.end)
        try await peer.channel.close()
        try await loop.submit {
            app.splice.handler.value.start()
            peer.splice.handler.value.start()
        }.get()
        #expect(try await app.written() == [Self.response, Self.data([5]), Self.end])
        #expect(ends.all == [.ended, .closed])
    }

    @Test("joining a channel that has closed and holds nothing throws, and the other side's first frame is not written")
    func joinClosed() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let peer = try await SplicedChannel.make(on: loop)
        let app = try await SplicedChannel.make(on: loop)
        try await peer.channel.close()
        await #expect(throws: ChannelError.self) {
            try await StreamSplice.join(peer.splice, StreamSpliceDirection(), firstFrame: Frame(kind: .streamAccepted, payload: []),
                                        app.splice, StreamSpliceDirection(), firstFrame: Self.response, onEnd: { _ in })
        }
        #expect(try await app.written().isEmpty)
    }

    @Test("backpressure: a side is read only while its partner can take more")
    func backpressure() async throws {
        let (app, peer, _) = try await Self.joined()
        let before = app.reads.reads
        peer.channel.isWritable = false
        app.channel.read()
        try await app.channel.testingEventLoop.submit {}.get()
        #expect(app.reads.reads == before, "held back while the peer connection is full")
        peer.channel.isWritable = true
        peer.channel.pipeline.fireChannelWritabilityChanged()
        try await app.channel.testingEventLoop.submit {}.get()
        #expect(app.reads.reads == before + 1, "the held read goes out once the peer can take more")
        app.channel.read()
        try await app.channel.testingEventLoop.submit {}.get()
        #expect(app.reads.reads == before + 2)
    }

    @Test("a holding splice stops reading once it holds 256 KiB, and reads on once joined")
    func holdLimit() async throws {
        let (loop, app, peer) = try await Self.unjoined()
        let chunk = Self.data([UInt8](repeating: 1, count: 64 * 1024))
        for _ in 0..<4 { try await peer.channel.writeInbound(chunk) }
        let before = peer.reads.reads
        peer.channel.read()
        try await loop.submit {}.get()
        #expect(peer.reads.reads == before)
        try await StreamSplice.join(app.splice, StreamSpliceDirection(), firstFrame: Self.response,
                                    peer.splice, StreamSpliceDirection(), firstFrame: nil, onEnd: { _ in })
        #expect(peer.reads.reads == before + 1)
        #expect(try await app.written() == [Self.response] + Array(repeating: chunk, count: 4))
    }

    @Test("last words: a read that fails passes the error frame on, then ends the pair")
    func lastWords() async throws {
        struct Quiet: Error {}
        let words = Frame(kind: .error, payload: Array("4610".utf8))
        let (app, peer, ends) = try await Self.joined(lastWords: { $0 is Quiet ? words : nil })
        peer.channel.pipeline.fireErrorCaught(Quiet())
        try await peer.channel.testingEventLoop.submit {}.get()
        #expect(try await app.written() == [words])
        #expect(ends.all == [nil])
    }

    @Test("the stall fault: the app's bytes stop after the budget, streamEnd included")
    func stall() async throws {
        let (app, peer, ends) = try await Self.joined(stall: 3)
        try await app.channel.writeInbound(Self.data([1, 2]))
        try await app.channel.writeInbound(Self.data([3, 4, 5]))
        try await app.channel.writeInbound(Self.end)
        #expect(try await peer.written() == [Self.data([1, 2]), Self.data([3])])
        #expect(ends.all.isEmpty, "the direction never ends: the receiver waits")
    }
}

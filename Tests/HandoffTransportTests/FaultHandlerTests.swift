import HandoffCore
@testable import HandoffTransport
import NIOCore
import NIOEmbedded
import Testing

@Suite("Fault injection and stream idleness in the channel pipeline")
struct FaultHandlerTests {
    @Test("dropAfterBytes: the first N bytes of frames go out, then the connection closes mid-frame")
    func byteBudget() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(FrameEncoder(), FrameMessageHandler())
        let encoder = try channel.pipeline.syncOperations.handler(type: FrameEncoder.self)
        try channel.pipeline.syncOperations.addHandler(OutboundByteBudget(budget: 12), position: .before(encoder))
        try channel.writeAndFlush(Frame(kind: .hello, payload: Array(repeating: 1, count: 4))).wait()  // 9 bytes
        #expect(throws: (any Error).self) { try channel.writeAndFlush(Frame(kind: .activity, payload: Array(repeating: 2, count: 20))).wait() }
        var out: [UInt8] = []
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) { out += buffer.readBytes(length: buffer.readableBytes)! }
        #expect(out.count == 12, "9 bytes of hello and 3 of the next frame's header")
        #expect(out.prefix(9) == [0x01, 0, 0, 0, 4, 1, 1, 1, 1][...])
        #expect(!channel.isActive, "closed after the budget")
    }

    @Test("a budget of 0 closes before the first byte")
    func zeroBudget() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(FrameEncoder(), FrameMessageHandler())
        let encoder = try channel.pipeline.syncOperations.handler(type: FrameEncoder.self)
        try channel.pipeline.syncOperations.addHandler(OutboundByteBudget(budget: 0), position: .before(encoder))
        #expect(throws: (any Error).self) { try channel.writeAndFlush(Frame(kind: .hello, payload: [1])).wait() }
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        #expect(!channel.isActive)
    }

    @Test("dropAfterBytes as the agent sets it: the budget goes in front of the encoder of a running connection")
    func limitOutbound() async throws {
        let channel = NIOAsyncTestingChannel()
        try await channel.eventLoop.submit { try channel.pipeline.syncOperations.addHandlers(FrameEncoder(), FrameMessageHandler()) }.get()
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        try await channel.writeAndFlush(Frame(kind: .hello, payload: [1])).get()  // 6 bytes, before the fault
        await channel.limitOutbound(toBytes: 8)
        await #expect(throws: (any Error).self) {  // 9 bytes: 8 go out
            try await channel.writeAndFlush(Frame(kind: .hello, payload: Array(repeating: 1, count: 4))).get()
        }
        var out: [UInt8] = []
        while var buffer = try await channel.readOutbound(as: ByteBuffer.self) { out += buffer.readBytes(length: buffer.readableBytes)! }
        #expect(out.count == 14, "the whole first frame, then 8 bytes of the second")
        #expect(!channel.isActive, "closed after the budget")
    }

    @Test("stallStreamAfterBytes: stream data passes up to the budget, the frame that crosses it is cut, later stream frames are dropped")
    func stall() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(TestWire(), StreamStallHandler(budget: 3))
        let data = { (bytes: [UInt8]) in Frame(kind: .streamData, payload: bytes) }
        let end = Frame(kind: .streamEnd, payload: [])
        for frame in [data([1, 2]), Frame(kind: .hello, payload: [9]), data([3, 4, 5]), data([6]), end] { try channel.writeInbound(frame) }
        var passed: [Frame] = []
        while let frame = try channel.readInbound(as: EncodedFrame.self) { passed.append(frame.frame) }
        #expect(passed == [data([1, 2]), Frame(kind: .hello, payload: [9]), data([3])], "other frames pass, for the relay to judge")
    }

    @Test("stallStreamAfterBytes: a stream within the budget passes whole, its end included")
    func stallNotReached() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(TestWire(), StreamStallHandler(budget: 100))
        let frames = [Frame(kind: .streamData, payload: [1, 2, 3]), Frame(kind: .streamEnd, payload: [])]
        for frame in frames { try channel.writeInbound(frame) }
        var passed: [Frame] = []
        while let frame = try channel.readInbound(as: EncodedFrame.self) { passed.append(frame.frame) }
        #expect(passed == frames)
    }

    @Test("streamIdleTimeout: nothing read for the timeout fails the channel with StreamIdleTimeout, on NIO's clock")
    func idle() throws {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandler(StreamIdleTimer(timeout: .seconds(2)))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        loop.advanceTime(by: .milliseconds(1500))
        try channel.writeInbound(ByteBuffer(bytes: [1]))
        loop.advanceTime(by: .milliseconds(1500))
        #expect(channel.isActive, "a byte 1.5 s in restarts the timer")
        loop.advanceTime(by: .milliseconds(600))
        #expect(throws: StreamIdleTimeout.self) { try channel.throwIfErrorCaught() }
        #expect(!channel.isActive)
    }
}

import HandoffCore
import HandoffTestSupport
@testable import HandoffTransport
import NIOCore
import NIOEmbedded
import Testing

/// A deterministic byte pattern, so payloads differ from one another and from their neighbours.
func patternBytes(_ count: Int, seed: UInt8) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
}

/// The bytes of several frames back to back.
func wireBytes(_ frames: [Frame]) -> [UInt8] { frames.flatMap(\.bytes) }

/// A channel with the frame decoder and the message handler: it reads ``Frame``s.
func decoderChannel(limits: FrameLimits) throws -> EmbeddedChannel {
    let channel = EmbeddedChannel()
    try channel.pipeline.syncOperations.addHandlers(FrameDecoder(limits: limits), FrameMessageHandler())
    return channel
}

/// A channel with the frame encoder and the message handler: it writes ``Frame``s.
func encoderChannel() throws -> EmbeddedChannel {
    let channel = EmbeddedChannel()
    try channel.pipeline.syncOperations.addHandlers(FrameEncoder(), FrameMessageHandler())
    return channel
}

@Suite("FrameDecoder and FrameEncoder")
struct FrameCodecTests {
    static let limits = FrameLimits(maxFrameBytes: 64 * 1024, maxUserInfoBytes: 3072)
    /// Smaller limits for the verifier, which feeds every byte separately ten times over.
    static let verifierLimits = FrameLimits(maxFrameBytes: 1024, maxUserInfoBytes: 512)

    /// A frame of every kind, with empty and non-empty payloads, including frames exactly at the
    /// verifier's limits and payloads that look like headers.
    static var sampleFrames: [Frame] {
        let kinds: [FrameKind] = [.hello, .fetch, .activity, .userInfo, .error, .controlRequest, .controlResponse]
        var frames: [Frame] = []
        for (i, kind) in kinds.enumerated() {
            frames.append(Frame(kind: kind, payload: []))
            frames.append(Frame(kind: kind, payload: patternBytes(1 + i * 17, seed: UInt8(i))))
        }
        frames.append(Frame(kind: .userInfo, payload: patternBytes(verifierLimits.maxUserInfoBytes, seed: 7)))
        frames.append(Frame(kind: .activity, payload: patternBytes(verifierLimits.maxFrameBytes, seed: 9)))
        // Payloads that look like headers.
        frames.append(Frame(kind: .error, payload: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF]))
        frames.append(Frame(kind: .hello, payload: Frame(kind: .userInfo, payload: []).bytes))
        return frames
    }

    /// Large frames: at the default 64 KiB frame limit, a 3 KiB userInfo, and a 1 MiB control frame.
    static var largeFrames: [Frame] {
        [
            Frame(kind: .activity, payload: patternBytes(64 * 1024, seed: 1)),
            Frame(kind: .userInfo, payload: patternBytes(3072, seed: 2)),
            Frame(kind: .hello, payload: []),
            Frame(kind: .controlRequest, payload: patternBytes(1 << 20, seed: 3)),
            Frame(kind: .controlResponse, payload: []),
        ]
    }

    /// Feeds `bytes` to a decoder in reads of the given sizes (the last size repeats); returns the
    /// frames decoded.
    func decode(_ bytes: [UInt8], reads sizes: [Int], limits: FrameLimits = FrameCodecTests.verifierLimits) throws -> [Frame] {
        let channel = try decoderChannel(limits: limits)
        var decoded: [Frame] = []
        var offset = 0
        var read = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + sizes[min(read, sizes.count - 1)])
            try channel.writeInbound(channel.allocator.buffer(bytes: bytes[offset..<end]))
            while let frame = try channel.readInbound(as: Frame.self) { decoded.append(frame) }
            offset = end
            read += 1
        }
        #expect(try channel.finish().isClean)
        return decoded
    }

    @Test("decodes a stream of every kind of frame fed whole, byte by byte and in chunks")
    func everyKindEveryChunking() throws {
        let frames = Self.sampleFrames
        let bytes = wireBytes(frames)
        for sizes in [[bytes.count], [1], [2], [3], [4], [5], [6], [7], [64], [1000], [4, 1, 100], [5, 5, 3000]] {
            #expect(try decode(bytes, reads: sizes) == frames, "reads of \(sizes)")
        }
        // Each frame on its own, whole and a byte at a time.
        for frame in frames {
            #expect(try decode(frame.bytes, reads: [frame.bytes.count]) == [frame])
            #expect(try decode(frame.bytes, reads: [1]) == [frame])
        }
    }

    @Test("random reads decode exactly what the transport-free FrameParser decodes", arguments: 0..<20)
    func randomReadsMatchFrameParser(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let frames = (0..<30).map { i in
            Frame(kind: [.hello, .streamData, .activity, .userInfo][Int(rng.next() % 4)],
                  payload: patternBytes(Int(rng.next() % 600), seed: UInt8(truncatingIfNeeded: i)))
        }
        let limits = FrameLimits(maxFrameBytes: 1024, maxUserInfoBytes: 1024)
        let bytes = wireBytes(frames)
        let sizes = (0..<200).map { _ in 1 + Int(rng.next() % 900) }
        var parser = FrameParser(limits: limits)
        parser.append(bytes)
        var expected: [Frame] = []
        while let frame = try parser.next() { expected.append(frame) }
        #expect(expected == frames)
        #expect(try decode(bytes, reads: sizes, limits: limits) == expected)
    }

    @Test("a frame that arrives whole in one read is passed on as a slice of it, not a copy")
    func wholeFramesAreSlices() throws {
        let channel = EmbeddedChannel(handler: FrameDecoder(limits: Self.limits))
        let frames = [Frame(kind: .streamData, payload: patternBytes(1000, seed: 1)), Frame(kind: .streamData, payload: patternBytes(500, seed: 2))]
        let read = channel.allocator.buffer(bytes: wireBytes(frames) + Frame(kind: .streamData, payload: [1, 2, 3]).bytes.prefix(6))
        let base = read.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        try channel.writeInbound(read)
        let first = try #require(try channel.readInbound(as: EncodedFrame.self))
        let second = try #require(try channel.readInbound(as: EncodedFrame.self))
        #expect(first.bytes.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == base)
        #expect(second.bytes.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == base + 1005)
        #expect([first.frame, second.frame] == frames)
        #expect(try channel.readInbound(as: EncodedFrame.self) == nil, "the third frame is not complete")
        try channel.writeInbound(channel.allocator.buffer(bytes: [2, 3]))
        #expect(try channel.readInbound(as: EncodedFrame.self)?.frame == Frame(kind: .streamData, payload: [1, 2, 3]))
        #expect(try channel.finish().isClean)
    }

    @Test("a frame split between two reads is passed on as its two parts, not copied; over three reads it is assembled")
    func splitFramesKeepTheirParts() throws {
        let channel = EmbeddedChannel(handler: FrameDecoder(limits: Self.limits))
        let frame = Frame(kind: .streamData, payload: patternBytes(3000, seed: 3))
        let bytes = frame.bytes
        let first = channel.allocator.buffer(bytes: bytes[..<1000])
        let second = channel.allocator.buffer(bytes: bytes[1000...])
        let bases = [first, second].map { $0.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } }
        try channel.writeInbound(first)
        #expect(try channel.readInbound(as: EncodedFrame.self) == nil)
        try channel.writeInbound(second)
        let split = try #require(try channel.readInbound(as: EncodedFrame.self))
        #expect(split.head.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == bases[0])
        #expect(split.tail?.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == bases[1])
        #expect(split.frame == frame && split.payloadCount == 3000 && split.kind == .streamData)
        #expect(split.payload == ByteBuffer(bytes: frame.payload))

        // The encoder writes the two parts as they are.
        let out = EmbeddedChannel(handler: FrameEncoder())
        try out.writeOutbound(split)
        var written: [UInt8] = []
        var buffers = 0
        while let buffer = try out.readOutbound(as: ByteBuffer.self) {
            written += buffer.readableBytesView
            buffers += 1
        }
        #expect(buffers == 2 && written == bytes)

        // Over three reads: assembled into one buffer.
        for (start, end) in [(0, 1000), (1000, 2000), (2000, bytes.count)] {
            try channel.writeInbound(channel.allocator.buffer(bytes: bytes[start..<end]))
        }
        let assembled = try #require(try channel.readInbound(as: EncodedFrame.self))
        #expect(assembled.tail == nil && assembled.frame == frame)
        #expect(try channel.finish().isClean)
        _ = try out.finish()
    }

    @Test("large frames decode fed whole and in chunks of several sizes", arguments: [Int.max, 1, 7, 1000, 4093, 65_536])
    func largeFramesInChunks(chunkSize: Int) throws {
        let limits = FrameLimits(maxFrameBytes: 1 << 20, maxUserInfoBytes: 3072)
        let frames = Self.largeFrames
        // Tiny chunks only through some of the frames: a megabyte a byte at a time is slow.
        let expected = switch chunkSize {
        case 1: Array(frames[1...2])
        case ..<100: Array(frames.prefix(3))
        default: frames
        }
        let bytes = wireBytes(expected)
        let channel = try decoderChannel(limits: limits)
        var decoded: [Frame] = []
        var offset = 0
        while offset < bytes.count {
            let end = bytes.count - offset > chunkSize ? offset + chunkSize : bytes.count
            try channel.writeInbound(channel.allocator.buffer(bytes: bytes[offset..<end]))
            while let frame = try channel.readInbound(as: Frame.self) { decoded.append(frame) }
            offset = end
        }
        #expect(decoded.count == expected.count)
        #expect(decoded == expected)
        #expect(try channel.finish().isClean)
    }

    @Test("frames split at every possible point decode the same")
    func everySplitPoint() throws {
        let frames = [Frame(kind: .hello, payload: [1, 2, 3]), Frame(kind: .userInfo, payload: []), Frame(kind: .fetch, payload: [9])]
        let bytes = wireBytes(frames)
        for split in 0...bytes.count {
            let channel = try decoderChannel(limits: Self.limits)
            try channel.writeInbound(channel.allocator.buffer(bytes: bytes[..<split]))
            try channel.writeInbound(channel.allocator.buffer(bytes: bytes[split...]))
            var decoded: [Frame] = []
            while let frame = try channel.readInbound(as: Frame.self) { decoded.append(frame) }
            #expect(decoded == frames, "split at \(split)")
            #expect(try channel.finish().isClean)
        }
    }

    // MARK: Refused headers

    /// Feeds `bytes` to a decoder channel; returns the error the channel reports, and the frames
    /// it passed on before that.
    func decodeError(_ bytes: [UInt8], limits: FrameLimits = FrameCodecTests.limits) -> (error: (any Error)?, frames: [Frame]) {
        let channel = try! decoderChannel(limits: limits)
        var caught: (any Error)?
        do { try channel.writeInbound(channel.allocator.buffer(bytes: bytes)) } catch { caught = error }
        var frames: [Frame] = []
        while let frame = try? channel.readInbound(as: Frame.self) { frames.append(frame) }
        _ = try? channel.finish()
        return (caught, frames)
    }

    @Test("a userInfo header declaring 4 GiB - 1 is refused after the 5 header bytes alone")
    func userInfoMaxDeclaredRefusedFromHeader() {
        let header: [UInt8] = [FrameKind.userInfo.rawValue, 0xFF, 0xFF, 0xFF, 0xFF]
        let result = decodeError(header)
        #expect(result.error as? FrameError == .userInfoTooLarge(declared: 4_294_967_295, limit: 3072))
        #expect(result.frames.isEmpty)
    }

    @Test("a userInfo header one byte over the limit is refused before any payload arrives")
    func userInfoLimitPlusOneRefused() throws {
        let channel = try decoderChannel(limits: Self.limits)
        // Four header bytes: nothing is decided yet.
        try channel.writeInbound(channel.allocator.buffer(bytes: [FrameKind.userInfo.rawValue, 0, 0, 0x0C]))
        #expect(try channel.readInbound(as: Frame.self) == nil)
        // The fifth byte completes a header declaring 3073 bytes.
        #expect(throws: FrameError.userInfoTooLarge(declared: 3073, limit: 3072)) {
            try channel.writeInbound(channel.allocator.buffer(bytes: [0x01]))
        }
        #expect(try channel.readInbound(as: Frame.self) == nil)
        _ = try? channel.finish()
    }

    @Test("the userInfo error says which limit was exceeded")
    func userInfoErrorDescription() {
        let error = FrameError.userInfoTooLarge(declared: 3073, limit: 3072)
        #expect(error.description.contains("maxUserInfoBytes"))
        #expect(error.description.contains("3073"))
    }

    @Test("a userInfo frame exactly at the limit passes")
    func userInfoAtLimitPasses() throws {
        let channel = try decoderChannel(limits: Self.limits)
        let frame = Frame(kind: .userInfo, payload: patternBytes(3072, seed: 1))
        try channel.writeInbound(channel.allocator.buffer(bytes: frame.bytes))
        #expect(try channel.readInbound(as: Frame.self) == frame)
        #expect(try channel.finish().isClean)
    }

    @Test("a non-userInfo frame over maxFrameBytes is refused; one at the limit passes")
    func frameTooLarge() throws {
        let limits = FrameLimits(maxFrameBytes: 100, maxUserInfoBytes: 3072)
        let over = decodeError(FrameHeader(kind: .activity, length: 101).bytes, limits: limits)
        #expect(over.error as? FrameError == .frameTooLarge(kind: .activity, declared: 101, limit: 100))

        let channel = try decoderChannel(limits: limits)
        let atLimit = Frame(kind: .activity, payload: patternBytes(100, seed: 2))
        try channel.writeInbound(channel.allocator.buffer(bytes: atLimit.bytes))
        #expect(try channel.readInbound(as: Frame.self) == atLimit)
        #expect(try channel.finish().isClean)
    }

    @Test("the userInfo limit applies only to userInfo frames", arguments: [FrameKind.hello, .activity, .controlRequest])
    func userInfoLimitOnlyForUserInfo(kind: FrameKind) throws {
        let channel = try decoderChannel(limits: Self.limits)
        let frame = Frame(kind: kind, payload: patternBytes(4000, seed: 4))
        try channel.writeInbound(channel.allocator.buffer(bytes: frame.bytes))
        #expect(try channel.readInbound(as: Frame.self) == frame)
        #expect(try channel.finish().isClean)
    }

    @Test("an unknown kind is refused", arguments: [UInt8(0x00), 0x1E, 0x1F, 0x22, 0x47, 0xFF])
    func unknownKind(raw: UInt8) {
        let result = decodeError([raw, 0, 0, 0, 0])
        #expect(result.error as? FrameError == .unknownKind(raw))
        #expect(result.frames.isEmpty)
    }

    @Test("frames before a refused header are still delivered, nothing after it")
    func framesBeforeRefusal() {
        let good = Frame(kind: .hello, payload: [1, 2, 3])
        let later = Frame(kind: .fetch, payload: [4])
        let bytes = good.bytes + [0x47, 0x45, 0x54, 0x20, 0x2F] + later.bytes
        let result = decodeError(bytes)
        #expect(result.error as? FrameError == .unknownKind(0x47))
        #expect(result.frames == [good])
    }

    @Test("a truncated frame at end of input is not delivered")
    func truncatedAtEOF() throws {
        let channel = try decoderChannel(limits: Self.limits)
        let frame = Frame(kind: .activity, payload: patternBytes(50, seed: 1))
        try channel.writeInbound(channel.allocator.buffer(bytes: frame.bytes.dropLast()))
        #expect(try channel.readInbound(as: Frame.self) == nil)
        _ = try? channel.finish()
        #expect(try channel.readInbound(as: Frame.self) == nil)
    }

    // MARK: Encoder

    @Test("FrameEncoder writes exactly Frame.bytes")
    func encoderMatchesFrameBytes() throws {
        for frame in Self.sampleFrames {
            let channel = try encoderChannel()
            try channel.writeOutbound(frame)
            var written: [UInt8] = []
            while var buffer = try channel.readOutbound(as: ByteBuffer.self) {
                written += buffer.readBytes(length: buffer.readableBytes) ?? []
            }
            #expect(written == frame.bytes, "\(frame.kind) of \(frame.payload.count) bytes")
            #expect(try channel.finish().isClean)
        }
    }

    @Test("the encoder's header is the kind then a big-endian length")
    func encoderHeaderLayout() throws {
        let channel = try encoderChannel()
        try channel.writeOutbound(Frame(kind: .controlResponse, payload: patternBytes(0x0102, seed: 0)))
        var buffer = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(buffer.readBytes(length: 5) == [0x21, 0x00, 0x00, 0x01, 0x02])
        #expect(buffer.readableBytes == 0x0102)
        _ = try channel.finish()
    }

    @Test("the codec in one pipeline round-trips every frame")
    func codecRoundTrip() throws {
        let sender = EmbeddedChannel()
        try sender.pipeline.syncOperations.addFrameCodec(limits: Self.limits)
        let receiver = EmbeddedChannel()
        try receiver.pipeline.syncOperations.addFrameCodec(limits: Self.limits)
        let frames = Self.sampleFrames
        for frame in frames { try sender.writeOutbound(frame) }
        while let buffer = try sender.readOutbound(as: ByteBuffer.self) { try receiver.writeInbound(buffer) }
        var decoded: [Frame] = []
        while let frame = try receiver.readInbound(as: Frame.self) { decoded.append(frame) }
        #expect(decoded == frames)
        _ = try sender.finish()
        _ = try receiver.finish()
    }
}

import HandoffCore
import HandoffTestSupport
import Testing

@Suite("FrameParser: splitting a byte stream into frames")
struct FrameParserTests {
    /// A seeded list of frames of every known kind; userInfo payloads stay within the default limit.
    static func randomFrames(count: Int, seed: UInt64) -> [Frame] {
        var rng = SplitMix64(seed: seed)
        let kinds = Array(FrameKind.known).sorted { $0.rawValue < $1.rawValue }
        return (0..<count).map { _ in
            let kind = kinds[Int.random(in: 0..<kinds.count, using: &rng)]
            let length = Int.random(in: 0...(Bool.random(using: &rng) ? 8 : 600), using: &rng)
            return Frame(kind: kind, payload: (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
    }

    /// Feeds `bytes` in the given chunk sizes, collecting every frame as soon as it is complete.
    static func parse(_ bytes: [UInt8], chunks: some Sequence<Int>, limits: FrameLimits = FrameLimits()) throws -> [Frame] {
        var parser = FrameParser(limits: limits)
        var frames: [Frame] = []
        var offset = 0
        for size in chunks {
            guard offset < bytes.count else { break }
            let end = min(bytes.count, offset + size)
            parser.append(bytes[offset..<end])
            offset = end
            while let frame = try parser.next() { frames.append(frame) }
        }
        #expect(offset == bytes.count, "all bytes were fed")
        #expect(parser.bufferedByteCount == 0, "nothing left over")
        return frames
    }

    static let frames = randomFrames(count: 400, seed: 2026)
    static let stream = frames.flatMap(\.bytes)

    @Test("a stream of many frames fed whole yields every frame in order")
    func whole() throws {
        #expect(Self.stream.count > 50_000, "long enough to exercise buffer compaction")
        #expect(try Self.parse(Self.stream, chunks: [Self.stream.count]) == Self.frames)
    }

    @Test("the same stream fed byte by byte yields the identical frame list")
    func byteByByte() throws {
        #expect(try Self.parse(Self.stream, chunks: repeatElement(1, count: Self.stream.count)) == Self.frames)
    }

    @Test("the same stream fed in random chunk sizes yields the identical frame list (seeded)", arguments: [1, 2, 3, 42, 9_999] as [UInt64])
    func randomChunks(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var sizes: [Int] = []
        var total = 0
        while total < Self.stream.count {
            let size = Int.random(in: 1...(Bool.random(using: &rng) ? 7 : 5_000), using: &rng)
            sizes.append(size)
            total += size
        }
        #expect(try Self.parse(Self.stream, chunks: sizes) == Self.frames)
    }

    @Test("chunks that split exactly at header and payload boundaries")
    func boundaryChunks() throws {
        var sizes: [Int] = []
        for frame in Self.frames.prefix(50) {
            sizes.append(contentsOf: [2, 3])
            if !frame.payload.isEmpty { sizes.append(frame.payload.count) }
        }
        let bytes = Self.frames.prefix(50).flatMap(\.bytes)
        #expect(try Self.parse(bytes, chunks: sizes) == Array(Self.frames.prefix(50)))
    }

    @Test("an incomplete header or payload yields nothing yet")
    func incomplete() throws {
        var parser = FrameParser(limits: FrameLimits())
        #expect(try parser.next() == nil)
        parser.append([0x01, 0, 0, 0])
        #expect(try parser.next() == nil)
        parser.append([2, 0xAA])
        #expect(try parser.next() == nil)
        #expect(parser.bufferedByteCount == 6)
        parser.append([0xBB, 0x05])
        #expect(try parser.next() == Frame(kind: .hello, payload: [0xAA, 0xBB]))
        #expect(parser.bufferedByteCount == 1)
        #expect(try parser.next() == nil)
    }

    @Test("empty payloads are frames too")
    func emptyPayloads() throws {
        let frames = [Frame(kind: .hello, payload: []), Frame(kind: .userInfo, payload: []), Frame(kind: .error, payload: [])]
        #expect(try Self.parse(frames.flatMap(\.bytes), chunks: [1, 1, 1, 1, 1, 100]) == frames)
    }

    @Test("good frames before a refused header are delivered; the refused header then throws")
    func refusedMidStream() throws {
        var parser = FrameParser(limits: FrameLimits())
        let good = Array(Self.frames.prefix(3))
        parser.append(good.flatMap(\.bytes) + [0x1E, 0, 0, 0, 0] + Frame(kind: .hello, payload: []).bytes)
        for frame in good { #expect(try parser.next() == frame) }
        #expect(throws: FrameError.unknownKind(0x1E)) { try parser.next() }
    }

    @Test("a userInfo frame over the client's limit is refused mid-stream by its header")
    func oversizedUserInfoMidStream() throws {
        var parser = FrameParser(limits: FrameLimits(maxUserInfoBytes: 100))
        let hello = Frame(kind: .hello, payload: [1, 2, 3])
        parser.append(hello.bytes + FrameHeader(kind: .userInfo, length: 101).bytes)
        #expect(try parser.next() == hello)
        #expect(throws: FrameError.userInfoTooLarge(declared: 101, limit: 100)) { try parser.next() }
    }
}

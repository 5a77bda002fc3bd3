import Foundation
import HandoffCore
import HandoffTrust
import Testing

@testable import HandoffTransport

#if canImport(Glibc)
import Glibc
#endif

@Suite("ControlByteStream: bytes as stream frames")
struct ControlByteStreamTests {
    let tooLarge = HandoffError.userInfoTooLarge("over the limit")

    @Test("the receiver counts and hashes the bytes up to streamEnd")
    func receives() throws {
        var stream = ControlByteStream(limit: 10, tooLarge: tooLarge)
        #expect(try stream.accept(Frame(kind: .streamData, payload: [1, 2, 3])) == [1, 2, 3])
        #expect(try stream.accept(Frame(kind: .streamData, payload: [])) == [])
        #expect(try stream.accept(Frame(kind: .streamData, payload: [4])) == [4])
        #expect(!stream.isComplete)
        #expect(try stream.accept(ControlByteStream.end) == nil)
        #expect(stream.isComplete)
        #expect(stream.count == 4)
        #expect(stream.sha256 == ContentDigest.hex(of: [1, 2, 3, 4] as [UInt8]))
        #expect(ContentDigest.hex(of: [] as [UInt8]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(throws: HandoffError.self) { try stream.accept(Frame(kind: .streamData, payload: [5])) }
    }

    @Test("more than the limit fails with its error; a sender's failure arrives as its error")
    func failures() throws {
        var stream = ControlByteStream(limit: 4, tooLarge: tooLarge)
        _ = try stream.accept(Frame(kind: .streamData, payload: [1, 2, 3]))
        #expect(throws: tooLarge) { try stream.accept(Frame(kind: .streamData, payload: [4, 5])) }
        #expect(stream.count == 3)
        var failed = ControlByteStream(limit: 4, tooLarge: tooLarge)
        let gone = HandoffError.connectionUnavailable("h1 went away")
        #expect(throws: gone) { try failed.accept(ControlByteStream.failure(gone)) }
        #expect(throws: gone) { try failed.accept(PeerMessage.error(code: 4609, message: "h1 went away").frame) }
        #expect(throws: HandoffError.self) { try failed.accept(Frame(kind: .hello, payload: [])) }
    }

    @Test("the sender reads a descriptor to its end in frames of at most 64 KiB, then streamEnd")
    func sends() async throws {
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bytestream-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var frames: [Frame] = []
        let sent = try await ControlByteStream.send(readingFrom: fd) { frames += $0 }
        #expect(frames.last == ControlByteStream.end)
        #expect(frames.dropLast().allSatisfy { $0.kind == .streamData && $0.payload.count <= ControlByteStream.maxChunkBytes })
        #expect(frames.dropLast().flatMap(\.payload) == bytes)
        #expect(sent.count == bytes.count)
        #expect(sent.sha256 == ContentDigest.hex(of: bytes))
    }
}

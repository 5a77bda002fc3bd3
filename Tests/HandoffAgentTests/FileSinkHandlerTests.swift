import Foundation
import HandoffCore
import HandoffTrust
import NIOCore
import NIOEmbedded
import Testing

@testable import HandoffAgent
@testable import HandoffTransport

/// The receiving agent's file sink on a testing channel: file data frames are written and hashed
/// in the pipeline (on the blocking pool), and the session sees only each file's end.
struct FileSinkHandlerTests {
    private func frame(_ kind: FrameKind, _ payload: [UInt8]) -> EncodedFrame {
        EncodedFrame(Frame(kind: kind, payload: payload), allocator: ByteBufferAllocator())
    }

    private func fileEnd(_ sha256: String) -> EncodedFrame {
        EncodedFrame(PeerMessage.files(.fileEnd(sha256: sha256)).frame, allocator: ByteBufferAllocator())
    }

    /// A temporary file open for writing, removed at the end of `body`.
    private func withTemporaryFile<T>(_ body: (Int32, String) async throws -> T) async throws -> T {
        let path = NSTemporaryDirectory() + "file-sink-\(UUID().uuidString)"
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        #expect(fd >= 0)
        defer {
            close(fd)
            unlink(path)
        }
        return try await body(fd, path)
    }

    private func sink() async throws -> (NIOAsyncTestingChannel, FileSinkHandler) {
        let channel = NIOAsyncTestingChannel()
        let sink = FileSinkHandler(eventLoop: channel.eventLoop)
        try await channel.pipeline.addHandler(sink)
        return (channel, sink)
    }

    @Test func writesAndHashesEachFileAndPassesTheRestOn() async throws {
        let (channel, sink) = try await sink()
        let first = Array("hello, ".utf8), second = Array((0..<200_000).map { UInt8($0 % 251) })
        try await withTemporaryFile { fd, path in
            async let outcome = sink.receive(FileSinkTarget(fd: fd, start: 0, size: first.count + second.count, budget: 0, digest: ContentDigest()))
            try await channel.writeInbound(frame(.streamData, first))
            try await channel.writeInbound(frame(.streamData, second))
            try await channel.writeInbound(fileEnd(ContentDigest.hex(of: first + second)))
            guard case .ended(let written, let claimed, let computed, _) = await outcome else { Issue.record("not ended"); return }
            #expect(written == first.count + second.count)
            #expect(claimed == computed)
            #expect(computed == ContentDigest.hex(of: first + second))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(first + second))
        }
        // Frames after the last file reach the session once the sink stops.
        try await channel.writeInbound(frame(.streamEnd, []))
        #expect(try await channel.readInbound(as: EncodedFrame.self) == nil)
        await sink.stop()
        #expect(try await channel.readInbound(as: EncodedFrame.self)?.kind == .streamEnd)
    }

    @Test func keepsTheNextFilesFramesUntilItIsArmed() async throws {
        let (channel, sink) = try await sink()
        try await withTemporaryFile { fd, _ in
            async let outcome = sink.receive(FileSinkTarget(fd: fd, start: 0, size: 1, budget: 0, digest: ContentDigest()))
            try await channel.writeInbound(frame(.streamData, [1]))
            try await channel.writeInbound(fileEnd(ContentDigest.hex(of: [1])))
            guard case .ended(1, _, _, _) = await outcome else { Issue.record("first file not ended"); return }
        }
        // The second file's bytes come while the session places the first.
        try await channel.writeInbound(frame(.streamData, [2, 3]))
        try await channel.writeInbound(fileEnd(ContentDigest.hex(of: [2, 3])))
        try await withTemporaryFile { fd, path in
            let outcome = await sink.receive(FileSinkTarget(fd: fd, start: 0, size: 2, budget: 0, digest: ContentDigest()))
            guard case .ended(2, let claimed, let computed, _) = outcome else { Issue.record("second file not ended: \(outcome)"); return }
            #expect(claimed == computed)
            let written = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(written == Data([2, 3]))
        }
    }

    @Test func refusesMoreThanOfferedAndStandardInputPastItsBudget() async throws {
        let (channel, sink) = try await sink()
        try await withTemporaryFile { fd, _ in
            async let outcome = sink.receive(FileSinkTarget(fd: fd, start: 0, size: 2, budget: 0, digest: ContentDigest()))
            try await channel.writeInbound(frame(.streamData, [1, 2, 3]))
            guard case .tooLong = await outcome else { Issue.record("not refused"); return }
        }
        let (other, stdinSink) = try await self.sink()
        try await withTemporaryFile { fd, _ in
            async let outcome = stdinSink.receive(FileSinkTarget(fd: fd, start: 0, size: nil, budget: 4, digest: ContentDigest()))
            try await other.writeInbound(frame(.streamData, [1, 2, 3]))
            try await other.writeInbound(frame(.streamData, [4, 5]))
            guard case .overBudget = await outcome else { Issue.record("not refused"); return }
        }
    }

    @Test func aConnectionThatEndsOrSendsSomethingElseBreaksTheFile() async throws {
        let (channel, sink) = try await sink()
        try await withTemporaryFile { fd, _ in
            async let outcome = sink.receive(FileSinkTarget(fd: fd, start: 0, size: 10, budget: 0, digest: ContentDigest()))
            try await channel.writeInbound(frame(.streamData, [1, 2, 3]))
            try await channel.close()
            guard case .broke(_, nil) = await outcome else { Issue.record("not broken by the end"); return }
        }
        let (other, otherSink) = try await self.sink()
        try await withTemporaryFile { fd, _ in
            async let outcome = otherSink.receive(FileSinkTarget(fd: fd, start: 0, size: 10, budget: 0, digest: ContentDigest()))
            try await other.writeInbound(frame(.streamEnd, []))
            guard case .broke(0, let reason?) = await outcome else { Issue.record("not broken by the frame"); return }
            #expect(reason.contains("streamEnd"))
        }
    }

    @Test func aFailedWriteSaysWhy() async throws {
        let (channel, sink) = try await sink()
        let fd = open("/dev/null", O_RDONLY)
        defer { close(fd) }
        async let outcome = sink.receive(FileSinkTarget(fd: fd, start: 0, size: 3, budget: 0, digest: ContentDigest()))
        try await channel.writeInbound(frame(.streamData, [1, 2, 3]))
        try await channel.writeInbound(fileEnd(ContentDigest.hex(of: [1, 2, 3])))
        guard case .writeFailed(0, let reason) = await outcome else { Issue.record("the write did not fail"); return }
        #expect(reason.contains("Bad file descriptor"))
    }
}

import Foundation
import HandoffCore
import HandoffTrust
import NIOCore
import NIOEmbedded
import Testing

@testable import HandoffAgent
@testable import HandoffTransport

/// The receiver's check of each file against the SHA-256 its `fileEnd` brings (issue 19, item 3):
/// the offer names no hash, so this check alone decides whether a file, resumed or not, is linked
/// into the download directory. On a testing channel, with a real download directory.
struct FileReceiverTests {
    static let contents = Array("hello, handoff: the whole file".utf8)

    /// A download directory in a fresh temporary directory, removed at the end of `body`.
    private func withDownloads<T>(_ body: (DownloadDirectory) async throws -> T) async throws -> T {
        let path = NSTemporaryDirectory() + "file-receiver-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(try DownloadDirectory(path: path))
    }

    /// The names in the download directory a person sees (not `.handoff-partial`).
    private func visible(_ directory: DownloadDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !$0.hasPrefix(".") }
    }

    /// Writes `prefix` as the partial file `name`, as an earlier, broken send would have left it.
    private func keepPartial(_ prefix: [UInt8], named name: String, in directory: DownloadDirectory) throws {
        let fd = try directory.openPartial(named: name)
        defer { close(fd) }
        #expect(prefix.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) } == prefix.count)
    }

    /// Receives one file whose bytes from `start` on, then a `fileEnd` claiming `claimed`, arrive
    /// on the connection (`contents` offered, resumable).
    private func receive(from start: Int, claiming claimed: String, partial: String, into directory: DownloadDirectory) async throws -> FileReceipt {
        let channel = NIOAsyncTestingChannel()
        let sink = FileSinkHandler(eventLoop: channel.eventLoop)
        try await channel.pipeline.addHandler(sink)
        // The sink keeps what comes before the file is armed.
        try await channel.writeInbound(EncodedFrame(Frame(kind: .streamData, payload: Array(Self.contents[start...])), allocator: ByteBufferAllocator()))
        try await channel.writeInbound(EncodedFrame(PeerMessage.files(.fileEnd(sha256: claimed)).frame, allocator: ByteBufferAllocator()))
        let file = OfferedFile(path: "notes/hello.txt", size: Self.contents.count, resumeKey: String(repeating: "ab", count: 32))
        var target = FileReceiver.Target(index: 0, file: file, path: try #require(ReceivedPath(sanitizing: file.path)), start: start, partialName: partial)
        var budget = 0
        return await FileReceiver.receiveFile(&target, sink: sink, directory: directory, budget: &budget, peer: "h1")
    }

    @Test func aResumedFileWhoseHashMatchesIsLinked() async throws {
        try await withDownloads { directory in
            try keepPartial(Array(Self.contents.prefix(7)), named: "p", in: directory)
            let receipt = try await receive(from: 7, claiming: ContentDigest.hex(of: Self.contents), partial: "p", into: directory)
            #expect(receipt.error == nil)
            #expect(receipt.name == "notes/hello.txt" && receipt.start == 7 && receipt.bytes == Self.contents.count - 7)
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory.path + "/notes/hello.txt")) == Data(Self.contents))
            #expect(directory.partialLength(named: "p") == nil, "the partial name is gone once the file is in place")
        }
    }

    @Test func aStalePartialCopyFailsTheFinalHashAndIsRemoved() async throws {
        try await withDownloads { directory in
            // Seven bytes of other contents, kept from an earlier send: the sender's hash of the
            // whole file cannot match what the receiver hashed.
            try keepPartial(Array("HELLO, ".utf8), named: "p", in: directory)
            let receipt = try await receive(from: 7, claiming: ContentDigest.hex(of: Self.contents), partial: "p", into: directory)
            let error = try #require(receipt.error)
            #expect(error.code == .userActivityHandoffFailed)
            #expect(error.message.contains("notes/hello.txt arrived with SHA-256"))
            #expect(error.message.contains("not the sender's \(ContentDigest.hex(of: Self.contents))"))
            #expect(error.message.contains("resumed from 7 bytes kept from an earlier send"))
            #expect(error.message.contains("the partial file was discarded: send it again"))
            #expect(receipt.name == "")
            #expect(visible(directory) == [], "nothing linked")
            #expect(directory.partialLength(named: "p") == nil, "the partial file is removed: the next send starts from byte 0")
        }
    }

    @Test func aFileWhoseHashDoesNotMatchTheSendersIsNotLinked() async throws {
        try await withDownloads { directory in
            let receipt = try await receive(from: 0, claiming: String(repeating: "0", count: 64), partial: "q", into: directory)
            let error = try #require(receipt.error)
            #expect(error.code == .userActivityHandoffFailed)
            #expect(error.message.contains("arrived with SHA-256 \(ContentDigest.hex(of: Self.contents)), not the sender's \(String(repeating: "0", count: 64))"))
            #expect(!error.message.contains("resumed"))
            #expect(visible(directory) == [])
            #expect(directory.partialLength(named: "q") == nil)
        }
    }
}

import Foundation
import NIOCore
import Testing

@testable import HandoffAgent

/// Batches written past the page cache land where buffered writes would: any offset, any split.
struct DirectFileWriterTests {
    private func bytes(_ count: Int, seed: UInt8) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) &+ seed } }

    @Test func writesBatchesAtAnyOffsetAsTheyWere() throws {
        // A kept prefix that ends off any boundary, then batches of uneven parts, big and small.
        let prefix = bytes(1234, seed: 1)
        let path = NSTemporaryDirectory() + "direct-writer-\(UUID().uuidString)"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(prefix)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fd = open(path, O_RDWR)
        #expect(fd >= 0)
        defer { close(fd) }
        let writer = DirectFileWriter()
        var expected = prefix
        for (index, sizes) in [[61_440, 300_000, 5], [700_001], [10], [4096 * 100, 4096 * 100, 7]].enumerated() {
            let parts = sizes.map { bytes($0, seed: UInt8(index + 2)) }
            let done = writer.write(parts.map { ByteBuffer(bytes: $0) }, to: fd, at: expected.count)
            #expect(done.errno == nil)
            #expect(done.bytes == sizes.reduce(0, +))
            expected += parts.flatMap { $0 }
        }
        var info = stat()
        #expect(fstat(fd, &info) == 0 && Int(info.st_size) == expected.count)
        let read = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(Array(read) == expected)
    }

    @Test func aFailedWriteSaysHowFarItGot() {
        let fd = open("/dev/null", O_RDONLY)
        defer { close(fd) }
        let done = DirectFileWriter().write([ByteBuffer(bytes: bytes(600_000, seed: 0))], to: fd, at: 0)
        #expect(done.bytes == 0)
        #expect(done.errno == EBADF)
    }
}

import CHandoffShims
import HandoffCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file a `bulk-read --output FILE --direct` writes: past the page cache (`O_DIRECT`) as the
/// receiving agent's `DirectFileWriter` writes a file, so that the reference does not depend on
/// the pages the VM has free. What is read fills one page-aligned 1 MiB buffer; each full buffer
/// is one direct write; the last, partial one is written after `O_DIRECT` is cleared with
/// `fcntl` (its length need not be aligned); one `fsync` at the end is the caller's.
///
/// A file system that refuses `O_DIRECT` (EINVAL: tmpfs, some FUSE), on `fcntl` or on the first
/// direct write, gets the rest buffered, and ``isDirect`` says so.
final class DirectBulkOutput {
    /// The alignment of direct writes' offsets, lengths and memory (as `DirectFileWriter`'s).
    static let alignment = 4096
    /// The buffer's size: each direct write is this long.
    static let blockBytes = 1 << 20

    let fd: Int32
    let path: String
    /// Whether the file system took the direct writes: false when it refused `O_DIRECT` (or it
    /// is unknown here), and the file was written buffered.
    private(set) var isDirect: Bool
    /// Whether `O_DIRECT` is set on `fd` now (cleared for the last, partial block).
    private var isDirectSet: Bool
    private let buffer: UnsafeMutableRawPointer
    private var filled = 0
    private var offset = 0

    /// Creates (truncates) `path` and sets `O_DIRECT` on it where the file system allows it.
    init(path: String) throws {
        var memory: UnsafeMutableRawPointer?
        guard posix_memalign(&memory, Self.alignment, Self.blockBytes) == 0, let memory else {
            throw BenchError("no aligned buffer of \(Self.blockBytes) bytes")
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            free(memory)
            throw BenchError("cannot open \(path): errno \(errno)")
        }
        self.fd = fd
        self.path = path
        buffer = memory
        let flags = fcntl(fd, F_GETFL)
        isDirect = handoff_o_direct_flag() != 0 && flags >= 0 && fcntl(fd, F_SETFL, flags | handoff_o_direct_flag()) == 0
        isDirectSet = isDirect
    }

    deinit {
        close(fd)
        free(buffer)
    }

    /// Reads once from `socket` into the buffer, writing it out when full; the bytes read, 0 at
    /// the end of the stream, -1 on a read error.
    func readSome(from socket: Int32) throws -> Int {
        let n = read(socket, buffer + filled, Self.blockBytes - filled)
        if n > 0 {
            filled += n
            if filled == Self.blockBytes { try flush() }
        }
        return n
    }

    /// Writes what the buffer holds at the file's end: direct when it is a whole block, else
    /// (the last one) with `O_DIRECT` cleared first.
    func flush() throws {
        guard filled > 0 else { return }
        if filled % Self.alignment != 0, isDirectSet { try clearDirect() }
        var done = pwriteAll(fd, UnsafeRawBufferPointer(start: buffer, count: filled), at: offset)
        if done.errno == EINVAL, isDirectSet {
            // Refused (the file system): the rest goes buffered.
            isDirect = false
            try clearDirect()
            let rest = pwriteAll(fd, UnsafeRawBufferPointer(start: buffer + done.bytes, count: filled - done.bytes),
                                 at: offset + done.bytes)
            done.bytes += rest.bytes
            done.errno = rest.errno
        }
        if let failed = done.errno { throw BenchError("write to \(path): errno \(failed)") }
        offset += filled
        filled = 0
    }

    private func clearDirect() throws {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags & ~handoff_o_direct_flag()) == 0 else {
            throw BenchError("cannot clear O_DIRECT on \(path): errno \(errno)")
        }
        isDirectSet = false
    }
}

/// `pwrite` until every byte is written or a write fails (EINTR retried): the bytes written, and
/// the `errno` of the write that failed, if one did.
func pwriteAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> (bytes: Int, errno: Int32?) {
    var done = 0
    while done < bytes.count {
        let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
        if n < 0 {
            if errno == EINTR { continue }
            return (done, errno)
        }
        done += n
    }
    return (done, nil)
}

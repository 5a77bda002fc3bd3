import CHandoffShims
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a received file's batches past the page cache (`O_DIRECT`) where the file system
/// allows it, through one aligned staging buffer that is reused batch after batch.
///
/// A buffered `pwrite` copies every byte into page-cache pages that are new to the process; on
/// this kind of virtual machine a fresh page costs a fault in the host too, so a 1 GiB file cost
/// the receiving agent ~2 s of system time in the copy alone (`perf`: `copy_folio_from_iter_atomic`,
/// half of its CPU). A direct write copies once, in user space, into a buffer that stays warm, and
/// the disk reads it from there.
///
/// Each batch goes at most in three writes: the bytes before the first 4 KiB boundary and those
/// after the last (buffered), and the aligned middle (direct). Batches too small to be worth it,
/// and file systems that refuse `O_DIRECT` (EINVAL: tmpfs, some FUSE), are written buffered as
/// before. The file's one `fsync` stays the caller's: nothing here changes when it is durable.
/// Used by one pool thread at a time (``FileSinkHandler`` writes one batch at a time per file).
public final class DirectFileWriter: @unchecked Sendable {
    /// The alignment of direct writes' offsets, lengths and memory.
    static let alignment = 4096
    /// Aligned middles shorter than this are written buffered.
    static let minimumDirectBytes = 64 * 1024

    private var staging: UnsafeMutableRawPointer?
    private var capacity = 0
    /// Set once the file system refused a direct write: the rest goes buffered.
    public private(set) var isDirectRefused = handoff_o_direct_flag() == 0

    /// A writer with no staging buffer yet (it is made at the first direct write).
    public init() {}

    deinit { free(staging) }

    /// What a batch's writes did: the bytes written from the batch's start, and the `errno` of
    /// the write that failed, if one did.
    public struct Written: Sendable {
        public var bytes: Int
        public var errno: Int32?
    }

    /// Writes `buffers`, back to back, to `fd` from `offset`.
    public func write(_ buffers: [ByteBuffer], to fd: Int32, at offset: Int) -> Written {
        let total = buffers.reduce(0) { $0 + $1.readableBytes }
        let lead = offset % Self.alignment
        let head = min(total, lead == 0 ? 0 : Self.alignment - lead)
        let middle = (total - head) / Self.alignment * Self.alignment
        guard !isDirectRefused, middle >= Self.minimumDirectBytes, let base = stage(buffers, total: total, lead: lead) else {
            return Self.buffered(buffers, to: fd, at: offset)
        }
        let bytes = UnsafeRawBufferPointer(start: base + lead, count: total)
        var done = Self.pwriteAll(fd, UnsafeRawBufferPointer(rebasing: bytes[0..<head]), at: offset)
        guard done.errno == nil else { return done }
        let direct = writeDirect(fd, UnsafeRawBufferPointer(rebasing: bytes[head..<head + middle]), at: offset + head)
        done.bytes += direct.bytes
        done.errno = direct.errno
        guard direct.errno == nil else { return done }
        let tail = Self.pwriteAll(fd, UnsafeRawBufferPointer(rebasing: bytes[head + middle..<total]), at: offset + head + middle)
        done.bytes += tail.bytes
        done.errno = tail.errno
        return done
    }

    /// Copies the batch into the staging buffer from byte `lead` (so that the batch's first
    /// aligned file offset falls on an aligned address); nil when no memory could be had.
    private func stage(_ buffers: [ByteBuffer], total: Int, lead: Int) -> UnsafeMutableRawPointer? {
        let needed = lead + total
        if needed > capacity {
            free(staging)
            staging = nil
            capacity = 0
            var memory: UnsafeMutableRawPointer?
            let size = (needed + Self.alignment - 1) / Self.alignment * Self.alignment
            guard posix_memalign(&memory, Self.alignment, size) == 0, let memory else { return nil }
            staging = memory
            capacity = size
        }
        guard let staging else { return nil }
        var at = lead
        for buffer in buffers {
            buffer.withUnsafeReadableBytes { bytes in
                if let source = bytes.baseAddress { (staging + at).copyMemory(from: source, byteCount: bytes.count) }
                at += bytes.count
            }
        }
        return staging
    }

    /// The aligned middle, with `O_DIRECT` set on `fd` for its writes only; buffered when the
    /// file system refuses it (and from then on).
    private func writeDirect(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> Written {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | handoff_o_direct_flag()) == 0 else {
            isDirectRefused = true
            return Self.pwriteAll(fd, bytes, at: offset)
        }
        var done = Self.pwriteAll(fd, bytes, at: offset)
        _ = fcntl(fd, F_SETFL, flags)
        if done.errno == EINVAL {
            // Refused (the file system, or the alignment it wants): the rest goes buffered.
            isDirectRefused = true
            let rest = Self.pwriteAll(fd, UnsafeRawBufferPointer(rebasing: bytes[done.bytes...]), at: offset + done.bytes)
            done.bytes += rest.bytes
            done.errno = rest.errno
        }
        return done
    }

    /// Writes each buffer where it is, through the page cache.
    static func buffered(_ buffers: [ByteBuffer], to fd: Int32, at offset: Int) -> Written {
        var done = Written(bytes: 0)
        for buffer in buffers {
            let one = buffer.withUnsafeReadableBytes { pwriteAll(fd, $0, at: offset + done.bytes) }
            done.bytes += one.bytes
            if let failed = one.errno {
                done.errno = failed
                return done
            }
        }
        return done
    }

    /// `pwrite` until every byte is written or a write fails (EINTR retried).
    public static func pwriteAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) -> Written {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                return Written(bytes: done, errno: errno)
            }
            done += n
        }
        return Written(bytes: done)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ContentDigest {
    /// Adds the first `length` bytes of the open file `fd`, read with `pread` (its offset is left
    /// alone); false when they cannot all be read (the file is shorter, or a read failed).
    public mutating func update(readingFirst length: Int, of fd: Int32) -> Bool {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < length {
            let n = pread(fd, buffer.baseAddress!, min(buffer.count, length - offset), off_t(offset))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            update(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            offset += n
        }
        return true
    }
}

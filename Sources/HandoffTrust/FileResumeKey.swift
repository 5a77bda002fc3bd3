#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The key `handoff send` offers each file under, for the receiver to name the partial copy a
/// later send of the same file resumes (`OfferedFile.resumeKey`, docs/PROTOCOL.md, "Sending
/// files"). It comes from what `stat` says of the file, never from its contents, so nothing is
/// read before the first byte is sent: the SHA-256 of the file's path in the send, its size, its
/// modification time in nanoseconds, its inode and its filesystem.
///
/// A file that is rewritten (a new modification time), replaced (a new inode), grown or shrunk
/// gets another key, so a partial copy of its old contents is never continued with new ones. What
/// the key cannot see (contents changed with the time set back) the SHA-256 the sender sends after
/// the file's last byte catches: the receiver discards the file.
public enum FileResumeKey {
    /// The key of a file with this identity, as 64 lowercase hex digits.
    public static func hex(path: String, size: Int, modifiedNanoseconds: Int64, inode: UInt64, filesystem: UInt64) -> String {
        // Lengths first, so that no two different identities run together into one text.
        ContentDigest.hex(of: "\(path.utf8.count):\(path)\n\(size)\n\(modifiedNanoseconds)\n\(inode)\n\(filesystem)".utf8)
    }

    /// The key of the file `status` describes (from `stat` or `fstat`), sent as `path`.
    public static func hex(path: String, status: stat) -> String {
        let modified = Int64(status.modificationTime.tv_sec) &* 1_000_000_000 &+ Int64(status.modificationTime.tv_nsec)
        return hex(path: path, size: Int(status.st_size), modifiedNanoseconds: modified, inode: UInt64(status.st_ino),
                   filesystem: UInt64(status.st_dev))
    }
}

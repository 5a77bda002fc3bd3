#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files only this user may read: directories of mode 0700, files of mode 0600 replaced
/// atomically (a new file created exclusively, synced, then renamed).
public enum PrivateFiles {
    /// `directory/name`.
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Creates `path` and its missing parents with mode 0700. An existing `path` must be this
    /// user's directory of mode 0700, not a symbolic link (``PrivateDirectory``): another user's
    /// directory could hold their `trust.json`.
    static func createDirectory(_ path: String) throws(TrustStoreError) {
        guard !path.isEmpty else {
            throw TrustStoreError("the state directory path is empty: set HOME or XDG_STATE_HOME, or give a directory (config key stateDirectory)")
        }
        do { try PrivateDirectory.create(path, purpose: "the state directory") } catch {
            throw TrustStoreError("\(error) (config key stateDirectory)")
        }
    }

    /// The contents of `path`, or nil when it does not exist.
    public static func contents(_ path: String) throws(TrustStoreError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            throw TrustStoreError("cannot read \(path) (\(describe(code))): check its owner and permissions")
        }
        defer { close(fd) }
        // Written with mode 0600 by this user: anything else was changed or planted by someone.
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw TrustStoreError("cannot examine \(path) (\(describe(errno))): check its owner and permissions") }
        guard info.st_uid == getuid() else {
            throw TrustStoreError("\(path) belongs to uid \(info.st_uid), not to this user (uid \(getuid())): refusing to use it; remove it, or fix its owner (chown)")
        }
        guard UInt32(info.st_mode) & 0o077 == 0 else {
            throw TrustStoreError("\(path) has mode \(String(UInt32(info.st_mode) & 0o777, radix: 8)): other users may read or change it, so it is refused; run chmod 600 \(path) (and make a new identity if the key may have leaked)")
        }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return result }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw TrustStoreError("cannot read \(path) (\(describe(code))): check the disk")
            }
            result.append(contentsOf: buffer[0..<n])
            if result.count > 16 << 20 {
                throw TrustStoreError("\(path) is larger than 16 MiB, so it is not a handoff file: move it away")
            }
        }
    }

    /// How long a file written by ``writeAtomically(_:to:durability:)`` must last.
    public enum Durability: Sendable {
        /// Through a power loss or a crash of the system: the file and the rename are fsynced
        /// before the write returns (keys, the trust store, settings).
        case powerLoss
        /// Through a restart or a crash of the process only: no fsync. Once the write returns, the
        /// new file is in place for any process that opens it; a power loss may leave the old
        /// file, or (on file systems that do not order the rename after the data, unlike ext4)
        /// an empty one, which the reader must treat as unreadable. For state that means nothing
        /// once the system has gone down and is written at every change (the activities kept for
        /// the agent's next start).
        case processRestart
    }

    /// Replaces `path` atomically with a new file of mode 0600 holding `bytes`: a reader sees the
    /// old file or the new one, never a part of either.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, durability: Durability = .powerLoss) throws(TrustStoreError) {
        var generator = SystemRandomNumberGenerator()
        let temporary = path + ".tmp-" + String(generator.next() as UInt64, radix: 36)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw TrustStoreError("cannot create \(temporary) (\(describe(errno))): check the directory is writable")
        }
        var failure = writeAll(bytes, to: fd)
        if failure == nil, durability == .powerLoss, fsync(fd) != 0 { failure = errno }
        if close(fd) != 0, failure == nil { failure = errno }
        if failure == nil, rename(temporary, path) != 0 { failure = errno }
        if let failure {
            _ = unlink(temporary)
            throw TrustStoreError("cannot write \(path) (\(describe(failure))): check the disk has space and the directory is writable")
        }
        guard durability == .powerLoss else { return }
        // Make the rename itself durable.
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.flatMap { $0.isEmpty ? "/" : $0 } ?? "."
        let dfd = open(directory, O_RDONLY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
    }

    /// Writes all of `bytes` to `fd` from offset 0, again after a signal or a short write;
    /// returns the errno of a failure, nil when every byte is written.
    static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += n
        }
        return nil
    }

    /// Moves a file that cannot be used aside, to `<path>.unreadable-<seconds>`, never deleting
    /// it; returns where it went, or nil when even that failed.
    public static func moveAside(_ path: String, at seconds: Int64) -> String? {
        let aside = "\(path).unreadable-\(seconds)"
        return rename(path, aside) == 0 ? aside : nil
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

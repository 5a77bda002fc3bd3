#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a file descriptor is the stream systemd connected to the journal.
///
/// systemd sets `JOURNAL_STREAM=DEV:INODE` for a service whose standard output or error goes to
/// the journal; the variable is inherited by children whose stderr may go elsewhere, so it counts
/// only when the descriptor's `fstat(2)` device and inode match (systemd.exec(5)).
public enum JournalStream {
    /// True when `environment`'s `JOURNAL_STREAM` names the file open at `descriptor`.
    public static func isConnected(_ descriptor: Int32 = STDERR_FILENO, environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }
}

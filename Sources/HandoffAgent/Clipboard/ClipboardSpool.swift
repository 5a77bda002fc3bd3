import HandoffCore
import HandoffTrust

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the agent keeps the bytes of its clipboard item: one file per item, named by the item's
/// ID, in `<stateDirectory>/clipboard` (mode 0700, this user's), each file mode 0600, never
/// world-readable. A file is deleted when its item expires or is replaced, and every file is
/// deleted when the agent starts.
struct ClipboardSpool: Sendable {
    /// The directory.
    let directory: String

    init(stateDirectory: String) {
        directory = (stateDirectory.hasSuffix("/") ? String(stateDirectory.dropLast()) : stateDirectory) + "/clipboard"
    }

    /// The file of item `id`.
    func path(_ id: UUID) -> String { "\(directory)/\(id.uuidString)" }

    /// Creates the directory if needed (checked private) and deletes what an earlier run left.
    func prepare() throws(HandoffError) {
        do { try PrivateDirectory.create(directory, purpose: "the clipboard's spool directory") } catch {
            throw .handoffFailed("cannot keep clipboard items: \(error)")
        }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names { unlink("\(directory)/\(name)") }
    }

    /// A new, empty file for item `id`, open for writing; never follows or replaces a file.
    func create(_ id: UUID) throws(HandoffError) -> Int32 {
        try prepareDirectoryOnce()
        let fd = open(path(id), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .handoffFailed("cannot create a clipboard file in \(directory): \(String(cString: strerror(errno)))") }
        return fd
    }

    /// An unnamed file for reading and writing (a command's output): created, then unlinked.
    func scratch() throws(HandoffError) -> Int32 {
        try prepareDirectoryOnce()
        let path = path(UUID.random())
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .handoffFailed("cannot create a file in \(directory): \(String(cString: strerror(errno)))") }
        unlink(path)
        return fd
    }

    /// Item `id`'s file, open for reading.
    func openForReading(_ id: UUID) throws(HandoffError) -> Int32 {
        let fd = open(path(id), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .handoffFailed("the clipboard item's bytes are gone (\(String(cString: strerror(errno))))") }
        return fd
    }

    /// Deletes item `id`'s file (a reader that has it open still reads it to its end).
    func remove(_ id: UUID) { unlink(path(id)) }

    /// The directory, created if it is missing (a start-up that could not create it tries again).
    private func prepareDirectoryOnce() throws(HandoffError) {
        var info = stat()
        if lstat(directory, &info) == 0 { return }
        do { try PrivateDirectory.create(directory, purpose: "the clipboard's spool directory") } catch {
            throw .handoffFailed("cannot keep clipboard items: \(error)")
        }
    }
}

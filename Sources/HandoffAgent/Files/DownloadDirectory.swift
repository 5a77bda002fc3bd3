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

/// The receiver's download directory, open for one send: files are written under
/// `.handoff-partial/` in it, then linked to their place under a name no file has yet.
///
/// Everything goes through directory descriptors: the directory itself (this user's, not
/// writable by others, not a symbolic link; ``PrivateDirectory``), its `.handoff-partial/` (0700),
/// and each directory of a sent tree, opened with `O_NOFOLLOW` one component at a time, so that a
/// symbolic link inside the tree cannot send a write elsewhere. A file is linked into place with
/// `linkat`, which fails rather than replace an existing name: there is never an overwrite.
final class DownloadDirectory {
    /// The hidden directory of partial files.
    static let partialDirectoryName = ".handoff-partial"
    /// How long a partial file is kept for a send to resume (then swept at the next send).
    static let partialLifetime: TimeInterval = 24 * 3600

    let path: String
    private let fd: Int32
    private let partialFD: Int32

    /// Opens (and creates, 0700, if missing) the directory and its `.handoff-partial/`.
    init(path: String) throws {
        try PrivateDirectory.create(path, forbidding: PrivateDirectory.noOtherWrite, purpose: "the download directory (config key receive.directory)")
        self.path = path
        fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw DownloadError("cannot open \(path): \(Self.lastError())") }
        if mkdirat(fd, Self.partialDirectoryName, 0o700) != 0, errno != EEXIST {
            let reason = Self.lastError()
            close(fd)
            throw DownloadError("cannot create \(path)/\(Self.partialDirectoryName): \(reason)")
        }
        partialFD = openat(fd, Self.partialDirectoryName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard partialFD >= 0 else {
            let reason = Self.lastError()
            close(fd)
            throw DownloadError("cannot open \(path)/\(Self.partialDirectoryName): \(reason)")
        }
    }

    deinit {
        close(partialFD)
        close(fd)
    }

    /// `receive.directory`, else the desktop's download directory as `xdg-user-dir DOWNLOAD`
    /// finds it (`XDG_DOWNLOAD_DIR` in the environment or in `$XDG_CONFIG_HOME/user-dirs.dirs`),
    /// else `~/Downloads`.
    static func resolve(configured: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if !configured.isEmpty { return configured }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (getpwuid(getuid()).map { String(cString: $0.pointee.pw_dir) } ?? "/")
        if let dir = environment["XDG_DOWNLOAD_DIR"], dir.hasPrefix("/") { return dir }
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        if let text = try? String(contentsOfFile: config + "/user-dirs.dirs", encoding: .utf8) {
            for line in text.split(separator: "\n") where line.hasPrefix("XDG_DOWNLOAD_DIR=") {
                var value = String(line.dropFirst("XDG_DOWNLOAD_DIR=".count).filter { $0 != "\"" })
                if value.hasPrefix("$HOME") { value = home + value.dropFirst("$HOME".count) }
                // xdg-user-dir answers $HOME itself when the entry is unset: files do not land there.
                if value.hasPrefix("/"), value != home, value != home + "/" { return value }
            }
        }
        return home + "/Downloads"
    }

    /// The free space for unprivileged writes (statvfs), or nil when it cannot be learnt.
    var freeBytes: Int? {
        var info = statvfs()
        guard fstatvfs(fd, &info) == 0 else { return nil }
        return Int(clamping: UInt64(info.f_bavail) &* UInt64(info.f_frsize))
    }

    // MARK: Partial files

    /// The length of the partial file `name`, or nil when there is none (or it is not a plain file).
    func partialLength(named name: String) -> Int? {
        var info = stat()
        guard fstatat(partialFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// Opens the partial file `name` for reading and writing, creating it (0600) if missing.
    func openPartial(named name: String) throws -> Int32 {
        let file = openat(partialFD, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw DownloadError("cannot write to \(path): \(Self.lastError())") }
        return file
    }

    func removePartial(named name: String) {
        _ = unlinkat(partialFD, name, 0)
    }

    /// Removes partial files older than ``partialLifetime``.
    func sweep(now: Date = Date()) {
        guard let dir = fdopendir(dup(partialFD)) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != ".", name != ".." else { continue }
            var info = stat()
            guard fstatat(partialFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            if now.timeIntervalSince1970 - TimeInterval(info.modificationTime.tv_sec) > Self.partialLifetime { removePartial(named: name) }
        }
    }

    // MARK: Placing a complete file

    /// Links the complete partial file `name` to `destination` (its directories created, 0755,
    /// none followed if a symbolic link), as `name`, else `name (2)`, `name (3)`... whichever is
    /// free, then removes the partial name. Returns the path it landed at, relative to the
    /// download directory.
    func place(partial name: String, at destination: ReceivedPath) throws -> String {
        var directory = dup(fd)
        guard directory >= 0 else { throw DownloadError("cannot use \(path): \(Self.lastError())") }
        defer { close(directory) }
        for component in destination.directories {
            if mkdirat(directory, component, 0o755) != 0, errno != EEXIST {
                throw DownloadError("cannot create the folder \(component) in \(path): \(Self.lastError())")
            }
            let next = openat(directory, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                throw DownloadError("cannot use the folder \(component) in \(path): \(errno == ELOOP || errno == ENOTDIR ? "it is not a folder (a symbolic link or a file is in the way)" : Self.lastError())")
            }
            close(directory)
            directory = next
        }
        let fileName = destination.fileName
        for attempt in 1...10_000 {
            let candidate = UniqueFileName.candidate(fileName, attempt: attempt)
            if linkat(partialFD, name, directory, candidate, 0) == 0 {
                _ = fsync(directory)
                removePartial(named: name)
                return (destination.directories + [candidate]).joined(separator: "/")
            }
            guard errno == EEXIST else { throw DownloadError("cannot place \(destination) in \(path): \(Self.lastError())") }
        }
        throw DownloadError("too many files named \(fileName) in \(path)")
    }

    static func lastError() -> String { String(cString: strerror(errno)) }
}

/// The download directory could not be used.
struct DownloadError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

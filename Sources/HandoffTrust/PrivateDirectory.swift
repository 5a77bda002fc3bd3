#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The check that a directory is this user's own: the one implementation behind the control
/// socket's directory (``checked(_:forbidding:)`` in the agent and in every client: the CLI and
/// HandoffKit apps), the state directory and the Inbox.
///
/// A directory passes when it is a real directory (a symbolic link is refused: it is not
/// followed), belongs to this process's uid, and has none of the `forbidden` mode bits. With the
/// default, ``noOtherWrite``, no other user can add, remove or replace its entries; ``privateMode``
/// also keeps them from listing or reading it.
public enum PrivateDirectory {
    /// Group and other may not write (mode `g-w,o-w`): enough for a directory whose files are
    /// themselves private, such as the socket directory of `$XDG_RUNTIME_DIR/handoff`.
    public static let noOtherWrite: UInt32 = 0o022
    /// Group and other have no access at all (mode 0700): for directories in a shared place such
    /// as `/tmp`, and for the state directory.
    public static let privateMode: UInt32 = 0o077

    /// Why `path` is not a directory private to this user, for a person ("belongs to uid 0, not
    /// to this user (uid 1000)"), or nil when it is. A missing directory is a problem too.
    public static func problem(_ path: String, forbidding forbidden: UInt32 = noOtherWrite) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            return code == ENOENT ? "does not exist" : "cannot be examined (\(String(cString: strerror(code))))"
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            return (info.st_mode & S_IFMT) == S_IFLNK ? "is a symbolic link (refused: it may point anywhere)" : "is not a directory"
        }
        guard info.st_uid == getuid() else { return "belongs to uid \(info.st_uid), not to this user (uid \(getuid()))" }
        let extra = UInt32(info.st_mode) & forbidden & 0o077
        guard extra == 0 else {
            let what = extra & 0o022 != 0 ? "is writable by other users" : "is readable by other users"
            return "\(what) (mode \(String(UInt32(info.st_mode) & 0o7777, radix: 8)))"
        }
        return nil
    }

    /// Throws ``PrivateDirectoryError`` naming the directory, the problem and the fix when
    /// ``problem(_:forbidding:)`` finds one.
    public static func check(_ path: String, forbidding forbidden: UInt32 = noOtherWrite, purpose: String) throws(PrivateDirectoryError) {
        guard let problem = problem(path, forbidding: forbidden) else { return }
        throw PrivateDirectoryError(path: path, problem: problem, purpose: purpose, forbidden: forbidden)
    }

    /// Creates `path` and its missing parents with mode 0700, then checks `path` itself with
    /// ``check(_:forbidding:purpose:)``: an existing directory is used only if it is this user's
    /// and has none of the `forbidden` bits (and is not a symbolic link). Existing parents are
    /// used as they are.
    public static func create(_ path: String, forbidding forbidden: UInt32 = privateMode, purpose: String) throws(PrivateDirectoryError) {
        guard path.hasPrefix("/") else {
            throw PrivateDirectoryError(path: path, problem: path.isEmpty ? "is empty" : "is not an absolute path", purpose: purpose, forbidden: forbidden)
        }
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) == 0 {
                _ = chmod(prefix, 0o700)  // in case the umask took bits away
                continue
            }
            let code = errno
            guard code == EEXIST else {
                throw PrivateDirectoryError(path: prefix, problem: "cannot be created: \(String(cString: strerror(code)))", purpose: purpose, forbidden: forbidden)
            }
        }
        try check(path, forbidding: forbidden, purpose: purpose)
    }

    /// The directory part of a path (`/a/b` of `/a/b/c`, `.` for a bare name, `/` for `/c`).
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let head = String(path[..<slash])
        return head.isEmpty ? "/" : head
    }
}

/// A directory that is not private to this user, with what to do about it.
public struct PrivateDirectoryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The directory.
    public var path: String
    /// What is wrong with it ("is writable by other users (mode 777, ...)").
    public var problem: String
    /// What the directory is for ("the control socket's directory").
    public var purpose: String
    /// The mode bits that were forbidden.
    public var forbidden: UInt32

    public init(path: String, problem: String, purpose: String, forbidden: UInt32) {
        self.path = path
        self.problem = problem
        self.purpose = purpose
        self.forbidden = forbidden
    }

    public var description: String {
        if problem.hasPrefix("cannot be created: ") {
            return "cannot create the directory \(path) (\(problem.dropFirst(19))) for \(purpose): check its parent exists and is writable, or choose another directory"
        }
        if problem == "is empty" || problem == "is not an absolute path" {
            return "\(purpose) path \(path.isEmpty ? "" : path + " ")\(problem): give an absolute path to a directory of yours"
        }
        let mode = forbidden & 0o077 == 0o077 ? "0700" : "0755 or stricter"
        return "\(purpose) \(path) \(problem). Refusing to use it: it must be a directory of yours (uid \(getuid())), not a symbolic link, of mode \(mode); "
            + "remove it or fix its owner and mode (chmod \(forbidden & 0o077 == 0o077 ? "700" : "go-w") \(path)), or use another one"
    }
}

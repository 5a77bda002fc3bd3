#if canImport(Glibc)
import Glibc
private typealias FileActions = posix_spawn_file_actions_t
private typealias SpawnAttributes = posix_spawnattr_t
private func makeFileActions() -> FileActions { FileActions() }
private func makeSpawnAttributes() -> SpawnAttributes { SpawnAttributes() }
#elseif canImport(Darwin)
import Darwin
// On Darwin these are opaque pointers that posix_spawn_*_init allocates.
private typealias FileActions = posix_spawn_file_actions_t?
private typealias SpawnAttributes = posix_spawnattr_t?
private func makeFileActions() -> FileActions { nil }
private func makeSpawnAttributes() -> SpawnAttributes { nil }
#endif

/// Starts programs with `posix_spawnp` and waits for them with `waitpid`, synchronously: for the
/// test and benchmark drivers (the integration tests' lab driver, `handoff-bench`), which start
/// agents and tools and wait for them from plain threads. The agent itself runs its children with
/// HandoffAgent's `ChildProcess` (swift-subprocess).
///
/// Each child gets its own process group and inherits no descriptor of the caller's but 0, 1 and
/// 2: every descriptor from 3 up is closed at spawn, with glibc's
/// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later), with
/// `POSIX_SPAWN_CLOEXEC_DEFAULT` on Darwin, else by marking every open descriptor close-on-exec
/// first (`/proc/self/fd`).
public enum HarnessProcess {
    /// Where a child's standard stream goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A file, created or truncated.
        case file(String)
        /// An existing descriptor, duplicated into the child.
        case descriptor(Int32)
    }

    /// A started child.
    public struct Handle: Sendable {
        /// Its process ID, also its process group ID.
        public var pid: pid_t
    }

    /// Starts `argv` (looked up on PATH when it has no slash) with exactly `environment`.
    public static func spawn(_ argv: [String], environment: [String: String], stdin: Stream = .null,
                             stdout: Stream = .null, stderr: Stream = .null) throws(HarnessSpawnError) -> Handle {
        guard let program = argv.first, !program.isEmpty else { throw HarnessSpawnError(program: "", reason: "empty command") }
        var actions = makeFileActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, fd)
            }
        }
        // After the dup2s above: their sources may be 3 or more.
        let closesAll = closeInheritedDescriptors(&actions)
        var attributes = makeSpawnAttributes()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Own process group; default signal dispositions and an empty mask in the child.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        var flags = Int32(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        #if canImport(Darwin)
        _ = closesAll
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #else
        if !closesAll { markAllCloseOnExec() }
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, program, &actions, &attributes, cArguments, cEnvironment)
        guard status == 0 else { throw HarnessSpawnError(program: program, reason: String(cString: strerror(status))) }
        return Handle(pid: pid)
    }

    #if canImport(Glibc)
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np`, looked up at run time: it is new in
    /// 2.34 and Swift's Glibc module does not declare it.
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }

    /// Adds "close every descriptor from 3 up" to `actions`; false when this glibc cannot.
    private static func closeInheritedDescriptors(_ actions: inout FileActions) -> Bool {
        guard let addCloseFrom else { return false }
        return addCloseFrom(&actions, 3) == 0
    }

    /// The fallback: marks every open descriptor from 3 up close-on-exec (the agent execs nothing
    /// itself, so this changes nothing else). A descriptor another thread opens between this and
    /// the spawn may still be inherited; glibc 2.34 and later do not need this.
    private static func markAllCloseOnExec() {
        guard let directory = opendir("/proc/self/fd") else {
            for fd in 3..<Int32(min(getdtablesize(), 65_536)) { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return
        }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let fd = Int32(name), fd >= 3 {
                let flags = fcntl(fd, F_GETFD)
                if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
            }
        }
    }
    #else
    private static func closeInheritedDescriptors(_ actions: inout FileActions) -> Bool { true }
    #endif

    /// How a child ended.
    public enum Exit: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)
        case waitFailed(String)
    }

    /// Blocks until the child ends; returns how it ended.
    public static func wait(_ handle: Handle) -> Exit {
        var status: Int32 = 0
        while waitpid(handle.pid, &status, 0) == -1 {
            guard errno == EINTR else { return .waitFailed("waitpid: \(String(cString: strerror(errno)))") }
        }
        let signal = status & 0x7f
        if signal == 0 { return .exited((status >> 8) & 0xff) }
        return .signalled(signal)
    }
}

/// A program the harness could not start.
public struct HarnessSpawnError: Error, Sendable, CustomStringConvertible {
    public var program: String
    public var reason: String
    public var description: String { "cannot start \(program): \(reason)" }
}

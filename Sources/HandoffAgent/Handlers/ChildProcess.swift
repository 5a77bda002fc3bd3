import Subprocess
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the agent runs programs: handlers (``CommandRunner``), handlers with streams, the
/// `urlOpener` and the apps it launches from `appsDirectory`. On swift-subprocess: the spawn, the
/// wait (one monitor thread for every child, no thread per waiting child) and the teardown are
/// the library's.
///
/// Every child:
/// - runs with exactly the environment it is given (``ChildEnvironment`` makes it);
/// - inherits no descriptor of the agent's but its standard input, output and error (0, 1, 2): not
///   the peer listener, the control socket, peer or app connections, nor files, although NIO opens
///   its sockets without close-on-exec. swift-subprocess closes every descriptor from 3 up at
///   spawn: with glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), with
///   `POSIX_SPAWN_CLOEXEC_DEFAULT` on Darwin, else on its fork/exec path with `close_range` (or by
///   marking `/proc/self/fd` close-on-exec). It refuses to spawn rather than leak;
/// - gets its own process group, default signal dispositions and an empty signal mask;
/// - is stopped by one teardown policy, ``teardown``: SIGTERM to its process group, then SIGKILL
///   to the group ``terminationGrace`` later if it has not exited. The policy runs at a timeout
///   and when the task that runs the child is cancelled.
///
/// An app started with ``start(_:environment:output:)`` is the exception: nothing stops it (a
/// person may be using it), not even the agent's shutdown, and it is not the agent's child.
public enum ChildProcess {
    /// Where a child's standard stream goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A descriptor duplicated into the child. With `closeAfterSpawn` the agent's copy is
        /// closed once the child has started (or could not be started).
        case descriptor(Int32, closeAfterSpawn: Bool = false)
    }

    /// How long a child has between SIGTERM and SIGKILL.
    public static let terminationGrace: Duration = .seconds(2)

    /// The one teardown policy: SIGTERM to the child's process group, then (swift-subprocess adds
    /// the last step) SIGKILL to the group after ``terminationGrace``.
    public static let teardown: [TeardownStep] = [.send(signal: .terminate, toProcessGroup: true, allowedDurationToNextStep: terminationGrace)]

    /// Runs `argv` (the first element is looked up on PATH when it has no slash) and waits until
    /// it exits. After `timeout` on `clock` it is stopped (``teardown``) and the outcome is
    /// `.timedOut`. (The grace between SIGTERM and SIGKILL is swift-subprocess's: real time.)
    public static func run(_ argv: [String], environment: [String: String], stdin: Stream = .null, stdout: Stream = .null,
                           stderr: Stream = .null, timeout: Duration? = nil, clock: some Clock<Duration> = ContinuousClock()) async -> CommandOutcome {
        do {
            return try await run(argv, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr, timeout: timeout, clock: clock) { _ in }
        } catch {
            return .failedToStart("\(error)")
        }
    }

    /// ``run(_:environment:stdin:stdout:stderr:timeout:clock:)`` with `body`, which runs once the
    /// child has started, alongside it (to feed or read its streams). The child is waited for
    /// after `body` returns. An error `body` throws stops the child (``teardown``) and is rethrown.
    static func run(_ argv: [String], environment: [String: String], stdin: Stream, stdout: Stream, stderr: Stream, timeout: Duration?,
                    clock: some Clock<Duration> = ContinuousClock(),
                    body: @escaping @Sendable (ProcessIdentifier) async throws -> Void) async throws -> CommandOutcome {
        let spawn: Spawn
        do throws(SpawnError) { spawn = try Spawn(argv, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr) } catch {
            return .failedToStart(error.reason)
        }
        let input: FileDescriptorInput = .fileDescriptor(.init(rawValue: spawn.stdin ?? -1), closeAfterSpawningProcess: stdin.closesAfterSpawn)
        return try await run(spawn, input: input, timeout: timeout, clock: clock) { try await body($0.processIdentifier) }
    }

    /// ``run(_:environment:stdin:stdout:stderr:timeout:clock:)`` with `body`, which writes the
    /// child's standard input (``StandardInputWriter``).
    static func run(_ argv: [String], environment: [String: String], stdout: Stream, stderr: Stream, timeout: Duration?,
                    clock: some Clock<Duration> = ContinuousClock(),
                    writingInput body: @escaping @Sendable (StandardInputWriter) async throws -> Void) async throws -> CommandOutcome {
        let spawn: Spawn
        do throws(SpawnError) { spawn = try Spawn(argv, environment: environment, stdin: nil, stdout: stdout, stderr: stderr) } catch {
            return .failedToStart(error.reason)
        }
        return try await run(spawn, input: .inputWriter, timeout: timeout, clock: clock) { try await body($0.standardInputWriter) }
    }

    /// The core of every run: spawns with swift-subprocess, runs `body` with the execution, waits.
    /// A timeout (a sleep on `clock`) cancels the run, and swift-subprocess stops a cancelled
    /// run's child with the configuration's teardown sequence (``teardown``) before it returns:
    /// one policy for timeouts and cancellation. Errors of `body` are rethrown (after the timeout:
    /// `.timedOut`); a child that could not be started is `.failedToStart`.
    private static func run<Input: InputProtocol>(_ spawn: Spawn, input: Input, timeout: Duration?, clock: some Clock<Duration>,
                                                  body: @escaping @Sendable (Execution<Input, FileDescriptorOutput, FileDescriptorOutput>) async throws -> Void) async throws -> CommandOutcome {
        let started = StartFlag()
        let finish = await withTaskGroup(of: Finish.self) { group in
            group.addTask {
                do {
                    return .ran(.success(try await Subprocess.run(spawn.configuration, input: input, output: spawn.stdout, error: spawn.stderr) { execution in
                        started.set()
                        try await body(execution)
                    }.terminationStatus))
                } catch {
                    return .ran(.failure(error))
                }
            }
            if let timeout {
                group.addTask {
                    do { try await clock.sleep(until: clock.now.advanced(by: timeout), tolerance: nil) } catch { return .timerCancelled }
                    return .timedOut
                }
            }
            var expired = false
            while let next = await group.next() {
                switch next {
                case .timedOut:
                    expired = true
                    group.cancelAll()
                case .timerCancelled:
                    continue
                case .ran:
                    group.cancelAll()
                    return expired ? .timedOut : next
                }
            }
            return .timedOut
        }
        switch finish {
        case .ran(.success(.exited(let code))): return .exited(Int32(truncatingIfNeeded: code))
        case .ran(.success(.signaled(let signal))): return .signalled(Int32(truncatingIfNeeded: signal))
        case .ran(.failure(let failure as SubprocessError)) where !started.isSet: return .failedToStart(reason(failure))
        case .ran(.failure(let failure)): throw failure
        case .timedOut, .timerCancelled: return .timedOut
        }
    }

    /// How a run's task group ends.
    private enum Finish: Sendable {
        case ran(Result<TerminationStatus, any Error>)
        case timedOut
        case timerCancelled
    }

    /// Starts `argv` as ``run(_:environment:stdin:stdout:stderr:timeout:clock:)`` does, with stdin
    /// `/dev/null` and its standard output and error on `output`, and returns its process ID once
    /// it runs, without waiting for it to exit: for the apps the agent launches.
    ///
    /// A launched app is a person's app: it is never stopped by the agent, not at a timeout, not
    /// when the request that launched it ends, not when the agent shuts down. So it is not the
    /// agent's child at all: a launcher, run and waited for like any child, starts it and exits,
    /// and the app is adopted by the session's reaper (PID 1, or the user's systemd, a
    /// subreaper), which reaps it when it exits. No task of the agent's outlives the launch. On
    /// Linux the launcher is util-linux's `setsid --fork`: the app gets a session of its own and
    /// the default signal dispositions, as every child does. (A shell's `&` would start it with
    /// SIGINT and SIGQUIT ignored, as POSIX has it for a background job without job control; that
    /// is the fallback elsewhere.) The program is looked up first, so one that does not exist or is
    /// not executable fails here with `strerror`'s words.
    public static func start(_ argv: [String], environment: [String: String], output: Stream = .null) async throws(SpawnError) -> pid_t {
        let program = argv.first ?? ""
        let resolved = try Spawn.lookUp(program, path: environment["PATH"])
        guard Spawn.isExecutableFile(resolved) else {
            throw SpawnError(program: program, reason: String(cString: strerror(access(resolved, F_OK) == 0 ? EACCES : ENOENT)))
        }
        var pipeEnds: [Int32] = [-1, -1]
        // No close-on-exec needed: every spawn closes the descriptors from 3 up (see above).
        guard pipe(&pipeEnds) == 0 else { throw SpawnError(program: program, reason: String(cString: strerror(errno))) }
        defer { close(pipeEnds[0]) }
        // The app's output goes where `output` says (the launcher's stderr); the launcher's stdout,
        // the pipe, carries only the app's process ID, and reaches end of file once the app has
        // started (its stdout is then its stderr).
        let outcome = await run(Self.launcher + [resolved] + Array(argv.dropFirst()),
                                environment: environment, stdout: .descriptor(pipeEnds[1], closeAfterSpawn: true), stderr: output,
                                timeout: launcherTimeout)
        guard outcome == .exited(0) else { throw SpawnError(program: program, reason: "its launcher (\(Self.launcher[0])) ended with \(outcome)") }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 32)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count > 0 { bytes += buffer.prefix(count) } else if count == 0 || errno != EINTR { break }
        }
        guard let pid = pid_t(String(decoding: bytes.filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)) else {
            throw SpawnError(program: program, reason: "its launcher (\(Self.launcher[0])) printed no process ID")
        }
        return pid
    }

    /// How long the launcher of ``start(_:environment:output:)`` may take: it only forks and exits.
    static let launcherTimeout: Duration = .seconds(10)

    /// The launcher's argv, before the app's: it prints the app's process ID, then execs it.
    #if os(Linux)
    static let launcher = ["/usr/bin/setsid", "--fork", "/bin/sh", "-c", #"echo $$; exec "$0" "$@" >&2"#]
    #else
    static let launcher = ["/bin/sh", "-c", #""$0" "$@" >&2 & echo $!"#]
    #endif

    /// Why a spawn failed, as `strerror` says it (what users saw before swift-subprocess).
    static func reason(_ error: SubprocessError) -> String {
        if let underlying = error.underlyingError { return String(cString: strerror(underlying.rawValue)) }
        if error.code == .executableNotFound { return String(cString: strerror(ENOENT)) }
        return "\(error)"
    }
}

extension ChildProcess.Stream {
    var closesAfterSpawn: Bool {
        switch self {
        case .null: true
        case .descriptor(_, let close): close
        }
    }
}

/// What a run spawns: the configuration and the descriptors of its standard streams.
private struct Spawn: Sendable {
    var configuration: Subprocess.Configuration
    /// The descriptor for stdin, when not written by the run.
    var stdin: Int32?
    var stdout: FileDescriptorOutput
    var stderr: FileDescriptorOutput

    /// `argv` with exactly `environment`, in a process group of its own, with
    /// ``ChildProcess/teardown``. On failure the descriptors handed over are closed.
    init(_ argv: [String], environment: [String: String], stdin: ChildProcess.Stream?, stdout: ChildProcess.Stream, stderr: ChildProcess.Stream) throws(SpawnError) {
        var opened: [Int32] = []
        do throws(SpawnError) {
            guard let program = argv.first, !program.isEmpty else { throw SpawnError(program: "", reason: "empty command") }
            var options = PlatformOptions()
            options.processGroupID = 0
            options.teardownSequence = ChildProcess.teardown
            configuration = Subprocess.Configuration(
                executable: .path(.init(try Self.lookUp(program, path: environment["PATH"]))),
                // argv[0] as given, not the resolved path.
                arguments: Arguments(executablePathOverride: program, remainingValues: Array(argv.dropFirst())),
                environment: .custom(try Self.entries(environment, program: program)),
                platformOptions: options)
            func descriptor(_ stream: ChildProcess.Stream, mode: Int32) throws(SpawnError) -> Int32 {
                switch stream {
                case .descriptor(let fd, _): return fd
                case .null:
                    let fd = open("/dev/null", mode | O_CLOEXEC)
                    guard fd >= 0 else { throw SpawnError(program: "/dev/null", reason: String(cString: strerror(errno))) }
                    opened.append(fd)
                    return fd
                }
            }
            self.stdin = try stdin.map { stream throws(SpawnError) in try descriptor(stream, mode: O_RDONLY) }
            self.stdout = .fileDescriptor(.init(rawValue: try descriptor(stdout, mode: O_WRONLY)), closeAfterSpawningProcess: stdout.closesAfterSpawn)
            self.stderr = .fileDescriptor(.init(rawValue: try descriptor(stderr, mode: O_WRONLY)), closeAfterSpawningProcess: stderr.closesAfterSpawn)
        } catch {
            for case .descriptor(let fd, true) in [stdin, stdout, stderr].compactMap({ $0 }) { close(fd) }
            opened.forEach { close($0) }
            throw error
        }
    }
}

extension Spawn {
    /// `program` as `execvp` finds it: as given when it has a slash, else the first executable file
    /// of that name in a directory of `path` (the child's PATH, else the agent's). Not
    /// swift-subprocess's `.name`, which spawns and tries an exec in every directory of PATH in
    /// turn: `true` took 11.2 ms (p50, debug build) with a 12-directory PATH, 1.6 ms looked up here.
    ///
    /// Each directory without the program is a failed path lookup in the kernel (about 3 µs each,
    /// and handlers are often in the last directories of PATH), so what was found is kept, by
    /// program and PATH, and only checked again (still an executable file) on the next run. A
    /// program installed meanwhile in an earlier directory of PATH is found once the one kept
    /// goes away, or the agent restarts.
    static func lookUp(_ program: String, path: String?) throws(SpawnError) -> String {
        if program.utf8.contains(UInt8(ascii: "/")) { return program }
        let directories = path ?? getenv("PATH").map { String(cString: $0) } ?? "/bin:/usr/bin"
        let key = directories + "\0" + program
        if let kept = found.withLock({ $0[key] }), isExecutableFile(kept) { return kept }
        let resolved = try search(program, in: directories)
        found.withLock { found in
            if found.count >= 64 { found.removeAll() }
            found[key] = resolved
        }
        return resolved
    }

    /// Programs found by ``lookUp(_:path:)``, by PATH and name.
    private static let found = Mutex<[String: String]>([:])

    /// Whether `path` is an executable regular file (a String converts as the argument).
    fileprivate static func isExecutableFile(_ path: UnsafePointer<CChar>) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
    }

    /// The first executable file named `program` in `directories` (a PATH), with the candidates
    /// made in one byte buffer, not a string each.
    private static func search(_ program: String, in directories: String) throws(SpawnError) -> String {
        let slash = UInt8(ascii: "/")
        var candidate: [UInt8] = []
        candidate.reserveCapacity(256)
        for directory in directories.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) {
            candidate.removeAll(keepingCapacity: true)
            if directory.isEmpty { candidate.append(UInt8(ascii: ".")) } else { candidate.append(contentsOf: directory) }
            candidate.append(slash)
            candidate.append(contentsOf: program.utf8)
            candidate.append(0)
            let found = candidate.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { isExecutableFile($0.baseAddress!) }
            }
            if found { return String(decoding: candidate.dropLast(), as: UTF8.self) }
        }
        throw SpawnError(program: program, reason: String(cString: strerror(ENOENT)))
    }

    /// `environment` as the child gets it, `NAME=value` each, NUL-terminated (swift-subprocess
    /// copies each with `strdup`); a name that cannot be one (empty, or with `=` or NUL in it) is
    /// refused.
    static func entries(_ environment: [String: String], program: String) throws(SpawnError) -> [[UInt8]] {
        var entries: [[UInt8]] = []
        entries.reserveCapacity(environment.count)
        for (name, value) in environment {
            guard !name.isEmpty, !name.utf8.contains(where: { $0 == UInt8(ascii: "=") || $0 == 0 }) else {
                throw SpawnError(program: program, reason: "bad environment variable \(name)")
            }
            var entry: [UInt8] = []
            entry.reserveCapacity(name.utf8.count + value.utf8.count + 2)
            entry.append(contentsOf: name.utf8)
            entry.append(UInt8(ascii: "="))
            entry.append(contentsOf: value.utf8)
            entry.append(0)
            entries.append(entry)
        }
        return entries
    }
}

/// Whether a run's child has started (its spawn went through).
private final class StartFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// A program that could not be started.
public struct SpawnError: Error, Sendable, CustomStringConvertible {
    public var program: String
    public var reason: String
    public var description: String { "cannot start \(program): \(reason)" }
}

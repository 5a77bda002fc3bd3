import Subprocess

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a command ended.
public enum CommandOutcome: Sendable, Equatable {
    case exited(Int32)
    case signalled(Int32)
    case timedOut
    case failedToStart(String)

    /// Exit status 0.
    public var succeeded: Bool { self == .exited(0) }

    public var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .signalled(let signal): "was killed by signal \(signal)"
        case .timedOut: "did not finish in time and was stopped"
        case .failedToStart(let why): "could not start: \(why)"
        }
    }
}

/// Runs a command with bytes on standard input and waits for it (``ChildProcess``). After the
/// timeout the command is stopped by the children's one teardown policy (``ChildProcess/teardown``):
/// SIGTERM to its whole process group, then SIGKILL two seconds later.
public struct CommandRunner: Sendable {
    /// The clock the timeouts run on: the continuous clock, a test's manual one.
    public var clock: any Clock<Duration>

    /// A runner whose timeouts run on `clock`.
    public init(clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
        // A command that exits without reading its input must not kill the agent: writes to its
        // closed pipe fail with EPIPE instead of raising SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Runs `argv` (the first element is looked up on PATH when it has no slash) with the
    /// children's minimal environment (``ChildEnvironment``) plus `environment`, and no
    /// descriptor of the agent's but its standard streams (``ChildProcess``). The command's
    /// output joins the agent's standard error, i.e. its log.
    public func run(_ argv: [String], input: [UInt8], environment: [String: String], timeout: Duration) async -> CommandOutcome {
        // `self.clock`: a bare `clock` would also name Glibc's clock(), and Swift opens the
        // existential only for an unambiguous name.
        let environment = ChildEnvironment.current(adding: environment)
        // An input that fits the pipe's buffer (an activity is a few KB) is written before the
        // spawn: no writer, no I/O registration, while the command runs.
        if let stdin = Self.filledPipe(input) {
            return await ChildProcess.run(argv, environment: environment, stdin: .descriptor(stdin, closeAfterSpawn: true),
                                          stdout: .descriptor(STDERR_FILENO), stderr: .descriptor(STDERR_FILENO), timeout: timeout, clock: self.clock)
        }
        do {
            return try await ChildProcess.run(argv, environment: environment,
                                              stdout: .descriptor(STDERR_FILENO), stderr: .descriptor(STDERR_FILENO), timeout: timeout,
                                              clock: self.clock) { stdin in
                // A command may exit without reading its input: the write then fails (EPIPE), and
                // the outcome is still how the command ended.
                _ = try? await stdin.write(input)
                try? await stdin.finish()
            }
        } catch {
            return .failedToStart("\(error)")
        }
    }

    /// The read end of a pipe that holds all of `input` and whose write end is closed; nil when
    /// `input` does not fit the pipe's buffer (or no pipe can be made).
    static func filledPipe(_ input: [UInt8]) -> Int32? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)
        var written = 0
        input.withUnsafeBytes { buffer in
            while written < buffer.count {
                let n = write(writeEnd, buffer.baseAddress! + written, buffer.count - written)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return }
                written += n
            }
        }
        close(writeEnd)
        guard written == input.count else {
            close(readEnd)
            return nil
        }
        return readEnd
    }
}

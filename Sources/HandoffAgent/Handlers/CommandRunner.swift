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
    public init() {
        // A command that exits without reading its input must not kill the agent: writes to its
        // closed pipe fail with EPIPE instead of raising SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Runs `argv` (the first element is looked up on PATH when it has no slash) with the
    /// children's minimal environment (``ChildEnvironment``) plus `environment`, and no
    /// descriptor of the agent's but its standard streams (``ChildProcess``). The command's
    /// output joins the agent's standard error, i.e. its log.
    public func run(_ argv: [String], input: [UInt8], environment: [String: String], timeout: Duration) async -> CommandOutcome {
        do {
            return try await ChildProcess.run(argv, environment: ChildEnvironment.current(adding: environment),
                                              stdout: .descriptor(STDERR_FILENO), stderr: .descriptor(STDERR_FILENO), timeout: timeout) { stdin in
                // A command may exit without reading its input: the write then fails (EPIPE), and
                // the outcome is still how the command ended.
                _ = try? await stdin.write(input)
                try? await stdin.finish()
            }
        } catch {
            return .failedToStart("\(error)")
        }
    }
}

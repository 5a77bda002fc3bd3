import Dispatch
import Foundation
import Synchronization

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

/// Runs a command with bytes on standard input and waits for it. After the timeout the command's
/// whole process group gets SIGTERM, then SIGKILL two seconds later.
public struct CommandRunner: Sendable {
    public init() {
        // A command that exits without reading its input must not kill the agent: writes to its
        // closed pipe fail with EPIPE instead of raising SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Runs `argv` (the first element is looked up on PATH when it has no slash) with the
    /// children's minimal environment (``ChildEnvironment``) plus `environment`, and no
    /// descriptor of the agent's but its standard streams (``ChildProcess``).
    public func run(_ argv: [String], input: [UInt8], environment: [String: String], timeout: Duration) async -> CommandOutcome {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return .failedToStart("pipe: \(String(cString: strerror(errno)))") }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        let fullEnvironment = ChildEnvironment.current(adding: environment)
        let handle: ChildProcess.Handle
        do {
            // The command's output joins the agent's standard error, i.e. its log.
            handle = try ChildProcess.spawn(argv, environment: fullEnvironment, stdin: .descriptor(readEnd),
                                            stdout: .descriptor(STDERR_FILENO), stderr: .descriptor(STDERR_FILENO))
        } catch {
            close(readEnd)
            close(writeEnd)
            return .failedToStart(error.reason)
        }
        close(readEnd)

        let finished = Mutex(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<CommandOutcome, Never>) in
            // Feed stdin on its own thread: a handler that does not read must not block the wait.
            ChildProcess.runBlocking {
                input.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let n = write(writeEnd, buffer.baseAddress! + offset, buffer.count - offset)
                        if n < 0 { if errno == EINTR { continue }; break }
                        offset += n
                    }
                }
                close(writeEnd)
            }
            let timedOut = Mutex(false)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Self.nanoseconds(timeout))) {
                guard !finished.withLock({ $0 }) else { return }
                timedOut.withLock { $0 = true }
                ChildProcess.signalGroup(handle, SIGTERM)
                DispatchQueue.global().asyncAfter(deadline: .now() + 2) {
                    if !finished.withLock({ $0 }) { ChildProcess.signalGroup(handle, SIGKILL) }
                }
            }
            ChildProcess.runBlocking {
                let outcome = ChildProcess.wait(handle)
                finished.withLock { $0 = true }
                continuation.resume(returning: timedOut.withLock { $0 } ? .timedOut : outcome)
            }
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
    }

}

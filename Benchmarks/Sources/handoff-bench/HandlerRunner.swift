import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the agent runs a handler (HandoffAgent's CommandRunner and ChildProcess, reproduced step
/// by step so the benchmark client does not depend on the agent module while it is being
/// changed): a stdin pipe, `posix_spawnp` into its own process group with default signals and
/// the agent's environment plus three variables, stdin fed from a Dispatch queue, `waitpid` on a
/// Dispatch queue, and the result delivered through a continuation.
struct HandlerRunner: Sendable {
    struct Outcome: Sendable {
        var status: Int32
        var succeeded: Bool { status == 0 }
        var description: String { "exited with status \(status)" }
    }

    init() { signal(SIGPIPE, SIG_IGN) }

    func run(_ argv: [String], input: [UInt8], environment: [String: String], timeout: Duration) async -> Outcome {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return Outcome(status: -1) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        var fullEnvironment = ProcessInfo.processInfo.environment
        fullEnvironment.merge(environment) { _, new in new }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, readEnd, 0)
        posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, 1)
        posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
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
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = fullEnvironment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        close(readEnd)
        guard status == 0 else {
            close(writeEnd)
            return Outcome(status: -1)
        }
        let child = pid
        return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            DispatchQueue.global().async {
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
            DispatchQueue.global().async {
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
                continuation.resume(returning: Outcome(status: (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)))
            }
        }
    }
}

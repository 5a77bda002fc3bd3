// handoff-bench spawn: what running the handler `true` costs, as the agent runs it and on each
// layer below, so that the layers' costs can be told apart (docs/BENCHMARKS.md, "The handler's
// spawn"). Every path gives `true` the same environment, its stdin a pipe already holding the
// activity, stdout and stderr the bench's stderr, and its own process group.

import HandoffAgent
import HandoffCore
import HandoffTestSupport
import Subprocess

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The layer a spawn goes through.
enum SpawnPath: String, CaseIterable {
    /// `CommandRunner.run`, as the agent runs a handler (its environment built each time, a
    /// 30-second timeout).
    case runner
    /// `ChildProcess.run` with the same timeout and a ready environment: the runner less the
    /// environment.
    case child
    /// `ChildProcess.run` without a timeout: the child's run less the timer.
    case childNoTimeout = "child-no-timeout"
    /// `Subprocess.run` with the same configuration and nothing around it: the library's floor.
    case subprocess
    /// `posix_spawnp` and a blocking `waitpid` on this thread (HarnessProcess): no library, no
    /// thread hop.
    case posix
}

func runSpawn(via path: SpawnPath, count: Int, warmup: Int) async -> Samples {
    var out = Samples()
    let activity = BenchmarkFixtures.activity()
    let input = Array((activity.json.serialized + "\n").utf8)
    let additions = [
        "HANDOFF_ACTIVITY_TYPE": activity.activityType.rawValue, "HANDOFF_ACTIVITY_ID": activity.id.uuidString,
        "HANDOFF_PEER": "h1",
    ]
    let runner = CommandRunner()  // the agent's own
    let environment = ChildEnvironment.current(adding: additions)
    let trueBinary = resolve("true", path: environment["PATH"] ?? "/usr/bin:/bin")
    var options = PlatformOptions()
    options.processGroupID = 0
    let configuration = Configuration(executable: .path(.init(trueBinary)), arguments: Subprocess.Arguments(executablePathOverride: "true", remainingValues: []),
                                      environment: .custom(environment.map { Array("\($0.key)=\($0.value)\0".utf8) }),
                                      platformOptions: options)

    func once() async -> String? {
        switch path {
        case .runner:
            let outcome = await runner.run(["true"], input: input, environment: additions, timeout: .seconds(30))
            return outcome.succeeded ? nil : outcome.description
        case .child, .childNoTimeout:
            guard let stdin = filledPipe(input) else { return "pipe failed" }
            let outcome = await ChildProcess.run(["true"], environment: environment, stdin: .descriptor(stdin, closeAfterSpawn: true),
                                                 stdout: .descriptor(STDERR_FILENO), stderr: .descriptor(STDERR_FILENO),
                                                 timeout: path == .child ? .seconds(30) : nil)
            return outcome.succeeded ? nil : outcome.description
        case .subprocess:
            guard let stdin = filledPipe(input) else { return "pipe failed" }
            do {
                let result = try await Subprocess.run(configuration, input: .fileDescriptor(.init(rawValue: stdin), closeAfterSpawningProcess: true),
                                                      output: .fileDescriptor(.init(rawValue: STDERR_FILENO), closeAfterSpawningProcess: false),
                                                      error: .fileDescriptor(.init(rawValue: STDERR_FILENO), closeAfterSpawningProcess: false))
                return result.terminationStatus.isSuccess ? nil : "\(result.terminationStatus)"
            } catch {
                return "\(error)"
            }
        case .posix:
            guard let stdin = filledPipe(input) else { return "pipe failed" }
            defer { close(stdin) }
            do {
                let handle = try HarnessProcess.spawn([trueBinary], environment: environment, stdin: .descriptor(stdin),
                                                      stdout: .descriptor(STDERR_FILENO), stderr: .descriptor(STDERR_FILENO))
                let exit = HarnessProcess.wait(handle)
                return exit == .exited(0) ? nil : "\(exit)"
            } catch {
                return "\(error)"
            }
        }
    }

    for _ in 0..<warmup { _ = await once() }
    let clock = ContinuousClock()
    let before = Usage()
    for _ in 0..<count {
        let start = clock.now
        if let failure = await once() { out.fail(failure) } else { out.samples.append((clock.now - start).microseconds) }
    }
    let after = Usage()
    let perSpawn = { (a: Double, b: Double) in JSONValue.double(((b - a) / Double(count) * 10).rounded() / 10) }
    out.extra["via"] = .string(path.rawValue)
    out.extra["cpu_self_us_per_spawn"] = perSpawn(before.selfMicroseconds, after.selfMicroseconds)
    out.extra["cpu_children_us_per_spawn"] = perSpawn(before.childrenMicroseconds, after.childrenMicroseconds)
    out.extra["context_switches_per_spawn"] = perSpawn(before.contextSwitches, after.contextSwitches)
    out.extra["threads_after"] = .integer(threadCount())
    return out
}

/// CPU time (utime + stime) of this process and of its waited-for children, and this process's
/// context switches (voluntary and not).
private struct Usage {
    var selfMicroseconds: Double
    var childrenMicroseconds: Double
    var contextSwitches: Double

    init() {
        func get(_ who: Int32) -> rusage {
            var usage = rusage()
            getrusage(__rusage_who_t(who), &usage)
            return usage
        }
        func microseconds(_ usage: rusage) -> Double {
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
        }
        let mine = get(RUSAGE_SELF.rawValue)
        selfMicroseconds = microseconds(mine)
        childrenMicroseconds = microseconds(get(RUSAGE_CHILDREN.rawValue))
        contextSwitches = Double(mine.ru_nvcsw + mine.ru_nivcsw)
    }
}

/// The threads of this process now.
private func threadCount() -> Int {
    guard let directory = opendir("/proc/self/task") else { return 0 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) { if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 } }
    return count
}

/// `program`'s path in the first directory of `path` that has it as an executable file.
private func resolve(_ program: String, path: String) -> String {
    for directory in path.split(separator: ":") where access("\(directory)/\(program)", X_OK) == 0 {
        return "\(directory)/\(program)"
    }
    return program
}

/// The read end of a pipe that holds `input` and whose write end is closed (as CommandRunner
/// makes its handlers' stdin).
private func filledPipe(_ input: [UInt8]) -> Int32? {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return nil }
    _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
    let written = input.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
    close(fds[1])
    guard written == input.count else {
        close(fds[0])
        return nil
    }
    return fds[0]
}


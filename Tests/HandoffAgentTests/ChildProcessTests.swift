import HandoffTestSupport
import Testing

@testable import HandoffAgent

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Foundation

/// The agent's one way to run children (on swift-subprocess) and its one teardown policy: SIGTERM
/// to the process group, then SIGKILL after ``ChildProcess/terminationGrace``.
@Suite("Child processes: one way to run them, one teardown policy", .timeLimit(.minutes(1)))
struct ChildProcessTests {
    /// Polls until process `pid` no longer exists (reaped), or with `orZombie` has at least died,
    /// up to `seconds`.
    func gone(_ pid: pid_t, orZombie: Bool = false, within seconds: Double = 10) async -> Bool {
        for _ in 0..<Int(seconds * 100) {
            if kill(pid, 0) == -1 && errno == ESRCH { return true }
            if orZombie, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
               let state = stat.split(separator: ")").last?.split(separator: " ").first, state == "Z" { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// The process ID written to `file`, once it is there (up to 30 s: a shell starts slowly on a
    /// loaded machine).
    func pid(in file: String) async throws -> pid_t {
        for _ in 0..<3000 {
            if let text = try? String(contentsOfFile: file, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) { return pid }
            try? await Task.sleep(for: .milliseconds(10))
        }
        throw CancellationError()
    }

    @Test("exit status, signal and a program that cannot start, as users saw them before")
    func outcomes() async {
        #expect(await ChildProcess.run(["/bin/sh", "-c", "exit 3"], environment: [:]) == .exited(3))
        #expect(await ChildProcess.run(["/bin/sh", "-c", "kill -USR1 $$"], environment: [:]) == .signalled(SIGUSR1))
        #expect(await ChildProcess.run(["/nonexistent/handoff-handler"], environment: [:]) == .failedToStart("No such file or directory"))
        #expect(await ChildProcess.run(["handoff-no-such-program"], environment: ["PATH": "/usr/bin:/bin"]) == .failedToStart("No such file or directory"))
        #expect(await ChildProcess.run(["true"], environment: ["PATH": "/usr/bin:/bin"]) == .exited(0))
    }

    @Test("at the timeout the whole process group gets SIGTERM: the child and what it started")
    func timeoutStopsTheGroup() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        // The grandchild notes the SIGTERM it gets (as the group's member, not from its parent).
        let grandchild = #"trap 'echo TERM > "$1"; exit 0' TERM; echo $$ > "$2"; while :; do sleep 0.05; done"#
        let script = #"sh -c "$1" grandchild "$2" "$3" & wait"#
        // The timeout runs on a manual clock: it is due once the grandchild runs with its trap set
        // (it writes its PID after the trap), however slowly the shells start.
        let timeoutClock = ManualClock()
        let run = Task {
            await ChildProcess.run(shell(script, grandchild, dir.file("term"), dir.file("grandchild")),
                                   environment: ["PATH": "/usr/bin:/bin"], timeout: .seconds(1), clock: timeoutClock)
        }
        defer { run.cancel() }  // stops the child if the test fails before the timeout
        let pid = try await pid(in: dir.file("grandchild"))
        try await timeoutClock.waitForSleeper(until: .zero.advanced(by: .seconds(1)))
        let clock = ContinuousClock()
        let start = clock.now
        timeoutClock.advance(by: .seconds(1))
        let outcome = await run.value
        #expect(outcome == .timedOut)
        #expect(clock.now - start < .seconds(10))
        // Not our child: whoever adopted it reaps it (or not) once it has died.
        #expect(await gone(pid, orZombie: true), "the grandchild \(pid) outlived the timeout")
        #expect(dir.contents("term") == "TERM\n", "the grandchild did not get SIGTERM")
    }

    @Test("a child that ignores SIGTERM gets SIGKILL after the grace")
    func sigkillAfterGrace() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = await ChildProcess.run(["/bin/sh", "-c", "trap '' TERM; sleep 30 & wait; wait"], environment: ["PATH": "/usr/bin:/bin"], timeout: .milliseconds(200))
        let elapsed = clock.now - start
        #expect(outcome == .timedOut)
        #expect(elapsed >= ChildProcess.terminationGrace, "\(elapsed)")
        #expect(elapsed < .seconds(25), "\(elapsed)")  // not the 30 s of the child's sleep; wide for a loaded machine
    }

    @Test("cancelling the task that runs a child stops it by the same policy")
    func cancellationStops() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let task = Task { await ChildProcess.run(shell(#"echo $$ > "$1"; exec sleep 30"#, dir.file("pid")), environment: ["PATH": "/usr/bin:/bin"]) }
        let child = try await pid(in: dir.file("pid"))
        task.cancel()
        let outcome = await task.value
        #expect(outcome == .signalled(SIGTERM))
        #expect(kill(child, 0) == -1 && errno == ESRCH, "the child \(child) still exists")
    }

    @Test("a started app is not waited for, keeps running, is not the agent's child, and ends when it exits")
    func startedAppIsReaped() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        try #require(mkfifo(dir.file("fifo"), 0o600) == 0)
        let pid = try await ChildProcess.start(shell(#"echo $$ > "$2"; read line < "$1""#, dir.file("fifo"), dir.file("pid")), environment: ["PATH": "/usr/bin:/bin"])
        #expect(kill(pid, 0) == 0, "the app runs")
        #expect(try await self.pid(in: dir.file("pid")) == pid, "the process ID is the app's own, not its launcher's")
        // Not our child: the launcher exited, and the session's reaper adopted it.
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let parent = stat.split(separator: ")").last?.split(separator: " ").dropFirst().first.flatMap { pid_t(String($0)) }
        #expect(parent != getpid(), "the app's parent is the agent")
        #if os(Linux)
        // The default signal dispositions, as every child gets: SIGINT and SIGQUIT not ignored
        // (a shell's `&` would ignore both).
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let ignored = status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }.flatMap { UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) }
        let intAndQuit: UInt64 = 1 << (UInt64(SIGINT) - 1) | 1 << (UInt64(SIGQUIT) - 1)
        #expect(ignored.map { $0 & intAndQuit } == 0, "\(status)")
        #endif
        // Let it finish: it reads a line from the FIFO, then exits. Whoever adopted it reaps it (or not).
        try "done\n".write(toFile: dir.file("fifo"), atomically: false, encoding: .utf8)
        #expect(await gone(pid, orZombie: true), "the app \(pid) did not end")
        do {
            _ = try await ChildProcess.start(["/nonexistent/handoff-app"], environment: [:])
            Issue.record("a missing program started")
        } catch {
            #expect(error.description.contains("No such file or directory"))
        }
    }
}

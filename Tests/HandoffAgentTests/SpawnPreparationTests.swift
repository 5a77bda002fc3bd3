import Foundation
import Testing

@testable import HandoffAgent

/// What every spawn prepares, made cheaper than the general tools (issue 16, item 7's cost): the
/// children's environment from `environ`, and the program found on PATH once, then only checked.
@Suite("Spawn preparation: the environment and the program on PATH", .timeLimit(.minutes(1)))
struct SpawnPreparationTests {
    @Test("the children's environment read from environ is the one made from ProcessInfo")
    func environmentAsFromProcessInfo() {
        setenv("LC_HANDOFF_TEST", "x=y", 1)
        setenv("HANDOFF_SECRET_TEST", "no", 1)
        defer {
            unsetenv("LC_HANDOFF_TEST")
            unsetenv("HANDOFF_SECRET_TEST")
        }
        let additions = ["HANDOFF_PEER": "laptop", "PATH": "/only/this"]
        let current = ChildEnvironment.current(adding: additions)
        #expect(current == ChildEnvironment.make(from: ProcessInfo.processInfo.environment, adding: additions))
        #expect(current["LC_HANDOFF_TEST"] == "x=y", "the value is everything after the first =")
        #expect(current["HANDOFF_SECRET_TEST"] == nil)
        #expect(current["PATH"] == "/only/this")
    }

    @Test("a program found on PATH is run again from there; once it is gone, PATH is searched again")
    func lookUpKeptThenSearchedAgain() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-lookup-\(UUID().uuidString)")
        let (first, second) = (root.appendingPathComponent("a"), root.appendingPathComponent("b"))
        for directory in [first, second] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        defer { try? FileManager.default.removeItem(at: root) }
        func install(_ directory: URL, exitStatus: Int) throws {
            let program = directory.appendingPathComponent("handoff-lookup-test")
            try "#!/bin/sh\nexit \(exitStatus)\n".write(to: program, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: program.path)
        }
        let environment = ["PATH": "\(first.path):\(second.path):/usr/bin:/bin"]
        try install(second, exitStatus: 7)
        #expect(await ChildProcess.run(["handoff-lookup-test"], environment: environment) == .exited(7))
        #expect(await ChildProcess.run(["handoff-lookup-test"], environment: environment) == .exited(7))
        try FileManager.default.removeItem(at: second.appendingPathComponent("handoff-lookup-test"))
        try install(first, exitStatus: 5)
        #expect(await ChildProcess.run(["handoff-lookup-test"], environment: environment) == .exited(5))
        try FileManager.default.removeItem(at: first.appendingPathComponent("handoff-lookup-test"))
        #expect(await ChildProcess.run(["handoff-lookup-test"], environment: environment) == .failedToStart("No such file or directory"))
    }

    @Test("an environment variable whose name cannot be one is refused before the spawn")
    func badName() async {
        #expect(await ChildProcess.run(["true"], environment: ["PATH": "/usr/bin:/bin", "A=B": "x"])
            == .failedToStart("bad environment variable A=B"))
    }
}

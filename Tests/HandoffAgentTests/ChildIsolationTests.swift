import HandoffCore
import Testing

@testable import HandoffAgent

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Foundation

/// What the agent's children inherit (review finding 12): no descriptor but 0, 1 and 2, and the
/// documented minimal environment.
@Suite("Child processes inherit nothing of the agent's", .timeLimit(.minutes(1)))
struct ChildIsolationTests {
    /// Lists what the child's descriptors point to (`ls -l /proc/$$/fd`: sh execs ls, which
    /// lists its own), one "N -> target" a line.
    static let listDescriptors = #"ls -l /proc/$$/fd > "$1""#

    /// The targets of the descriptors the child listed ("/path", "socket:[123]", "pipe:[45]").
    func targets(in file: String) -> [String] {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in line.range(of: " -> ").map { String(line[$0.upperBound...]) } }
    }

    /// How /proc names what `fd` is open on: `socket:[inode]`, `pipe:[inode]`, else its path.
    func identity(of fd: Int32, path: String? = nil) -> String {
        var info = stat()
        fstat(fd, &info)
        switch info.st_mode & S_IFMT {
        case S_IFSOCK: return "socket:[\(info.st_ino)]"
        case S_IFIFO: return "pipe:[\(info.st_ino)]"
        default: return path ?? "fd \(fd)"
        }
    }

    @Test("a spawned child has only 0, 1, 2 (plus what it opens), whatever the agent holds open: a file, a socket, a listener, a pipe without close-on-exec")
    func onlyStandardDescriptors() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        // Descriptors of every kind the agent holds, none of them close-on-exec (as NIO's sockets).
        let file = open(dir.file("held"), O_WRONLY | O_CREAT, 0o600)
        let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let unix = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(tcp, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        _ = listen(tcp, 1)
        var pipeEnds: [Int32] = [0, 0]
        _ = pipe(&pipeEnds)
        let held = [file, tcp, unix, pipeEnds[0], pipeEnds[1]]
        defer { held.forEach { close($0) } }
        for fd in held {
            try #require(fd >= 3)
            try #require(fcntl(fd, F_GETFD) & FD_CLOEXEC == 0)
        }

        let out = dir.file("fds")
        let outcome = await ChildProcess.run(shell(Self.listDescriptors, out), environment: ["PATH": "/usr/bin:/bin"],
                                             stdout: .descriptor(STDERR_FILENO), stderr: .descriptor(STDERR_FILENO))
        #expect(outcome == .exited(0))
        let seen = targets(in: out)
        #expect(seen.count >= 3, "listed: \(seen)")
        let heldIdentities = [identity(of: file, path: dir.file("held")), identity(of: tcp), identity(of: unix), identity(of: pipeEnds[0]), identity(of: pipeEnds[1])]
        #expect(Set(heldIdentities).count == 4, "a pipe's two ends are one pipe:[inode]")
        for held in heldIdentities { #expect(!seen.contains(held), "the child inherited \(held): \(seen)") }
        // Beyond 0, 1, 2 only ls's own directory descriptor (and the redirected output's copy).
        #expect(seen.count <= 5, "\(seen)")
    }

    @Test("a handler run by the dispatcher, fed on a pipe, also sees only 0, 1, 2")
    func handlerDescriptors() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let leaked = open(dir.file("held"), O_WRONLY | O_CREAT, 0o600)
        defer { close(leaked) }
        var pipeEnds: [Int32] = [0, 0]
        _ = pipe(&pipeEnds)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        let out = dir.file("fds")
        let outcome = await CommandRunner().run(shell(Self.listDescriptors, out), input: Array("{}".utf8), environment: [:], timeout: .seconds(10))
        #expect(outcome == .exited(0))
        let seen = targets(in: out)
        for held in [dir.file("held"), identity(of: pipeEnds[0]), identity(of: pipeEnds[1])] {
            #expect(!seen.contains(held), "the handler inherited \(held): \(seen)")
        }
        #expect(seen.count <= 5, "\(seen)")
    }

    @Test("children get the documented variables, the handler contract's HANDOFF_* ones, and nothing else of the agent's")
    func minimalEnvironment() {
        let agent = [
            "PATH": "/usr/bin", "HOME": "/home/u", "USER": "u", "LOGNAME": "u", "LANG": "de_DE.UTF-8", "LC_TIME": "C", "TZ": "UTC",
            "XDG_RUNTIME_DIR": "/run/user/1000", "DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "XDG_CURRENT_DESKTOP": "GNOME",
            "AWS_SECRET_ACCESS_KEY": "secret", "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1", "LD_PRELOAD": "/tmp/evil.so",
            "HANDOFF_SOCKET": "/run/user/1000/handoff/handoffd.sock", "HANDOFF_PEER": "spoofed", "GITHUB_TOKEN": "t",
        ]
        let child = ChildEnvironment.make(from: agent, adding: ["HANDOFF_PEER": "laptop", "HANDOFF_ACTIVITY_ID": "X"])
        #expect(child == [
            "PATH": "/usr/bin", "HOME": "/home/u", "USER": "u", "LOGNAME": "u", "LANG": "de_DE.UTF-8", "LC_TIME": "C", "TZ": "UTC",
            "XDG_RUNTIME_DIR": "/run/user/1000", "DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "XDG_CURRENT_DESKTOP": "GNOME",
            "HANDOFF_PEER": "laptop", "HANDOFF_ACTIVITY_ID": "X",
        ])
    }

    @Test("a handler does not see a secret of the agent's environment")
    func handlerEnvironment() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        setenv("HANDOFF_TEST_SECRET", "s3cret", 1)
        defer { unsetenv("HANDOFF_TEST_SECRET") }
        let out = dir.file("env")
        let outcome = await CommandRunner().run(shell(#"env > "$1""#, out), input: [], environment: ["HANDOFF_PEER": "p"], timeout: .seconds(10))
        #expect(outcome == .exited(0))
        let env = dir.contents("env") ?? ""
        #expect(!env.contains("s3cret"))
        #expect(env.contains("HANDOFF_PEER=p"))
        #expect(env.contains("PATH="))
    }
}

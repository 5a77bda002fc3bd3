import HandoffCore
import HandoffTransport
import NIOCore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Foundation

/// A fake agent: a real Unix socket listener in another process (Python, as root, so that it can
/// bind in any directory), which counts the bytes clients send it. With `asNobody` it drops to
/// uid 65534 before `listen()`, which is when the kernel records the credentials SO_PEERCRED
/// reports to clients.
final class FakeAgentListener: @unchecked Sendable {
    private let process = Process()
    private let output = Pipe()
    private let input = Pipe()

    /// Closes each connection once nothing more arrives after its first bytes (the client then reports
    /// that the agent closed without answering); prints its counts and exits when its standard
    /// input closes (signals may be blocked in a test runner's children).
    static let script = #"""
    import os, select, socket, sys
    path, as_nobody = sys.argv[1], sys.argv[2] == "1"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o666)
    if as_nobody:
        os.setgroups([]); os.setgid(65534); os.setuid(65534)
    listener.listen(8)
    connections, received = 0, 0
    print("ready", flush=True)
    clients, answered = [], []
    while True:
        readable, _, _ = select.select([sys.stdin, listener] + clients, [], [], 0.05 if answered else None)
        if sys.stdin in readable:
            print("connections=%d bytes=%d" % (connections, received), flush=True)
            os._exit(0)
        if not readable:  # the request is in: close, as an agent refusing it would
            for c in answered: clients.remove(c); c.close()
            answered = []
        for s in readable:
            if s is listener:
                c, _ = listener.accept(); clients.append(c); connections += 1
            elif s is not sys.stdin:
                data = s.recv(65536)
                received += len(data)
                if not data:
                    clients.remove(s); s.close()
                    if s in answered: answered.remove(s)
                elif s not in answered: answered.append(s)
    """#

    init(path: String, asNobody: Bool) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, path, asNobody ? "1" : "0"]
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        try #require(line.hasPrefix("ready"), "the fake agent did not start: \(line)")
    }

    /// Stops the listener; returns (connections accepted, bytes received).
    func stop() -> (connections: Int, bytes: Int) {
        try? input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let numbers = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : (-1, -1)
    }
}

/// The CLI's and HandoffKit's checks before they send anything to a control socket (review
/// finding 7): the directory must be the user's and private, and the listener of the user's uid.
/// Each case runs a real listener and asserts it received no byte.
@Suite("Control socket checks in clients", .serialized, .timeLimit(.minutes(1)))
struct ControlSocketCheckTests {
    /// Calls `status` through ControlClient at `path` while a fake agent listens there; returns
    /// the client's result and what the fake agent received.
    func callFake(_ path: String, asNobody: Bool = false) async throws -> (Result<JSONValue, HandoffError>, connections: Int, bytes: Int) {
        let fake = try FakeAgentListener(path: path, asNobody: asNobody)
        let result = await ControlClient(socketPath: path).call("status")
        try await Task.sleep(for: .milliseconds(100))  // let a sent byte reach the listener
        let (connections, bytes) = fake.stop()
        return (result, connections, bytes)
    }

    func failureMessage(_ result: Result<JSONValue, HandoffError>) -> String {
        guard case .failure(let error) = result else { return "no failure: \(result)" }
        return "\(error.code.rawValue) \(error.message)"
    }

    @Test("a listener of the user's uid in a private directory gets the request (the fake agent works)")
    func control() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let (_, connections, bytes) = try await callFake(dir + "/ctl.sock")
        #expect(connections == 1)
        #expect(bytes > 0)
    }

    @Test("a socket directory writable by everyone (mode 0777) is refused before connecting")
    func worldWritableDirectory() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        chmod(dir, 0o777)
        let (result, connections, bytes) = try await callFake(dir + "/ctl.sock")
        #expect(failureMessage(result).contains("is writable by other users"), "\(failureMessage(result))")
        #expect(failureMessage(result).hasPrefix("4609"))
        #expect(connections == 0 && bytes == 0)
    }

    @Test("a socket directory writable by its group (mode 0770) is refused")
    func groupWritableDirectory() async throws {
        let parent = try makeTemporaryDirectory()
        defer { removeDirectory(parent) }
        let dir = parent + "/run"
        mkdir(dir, 0o700)
        chmod(dir, 0o770)
        let (result, connections, bytes) = try await callFake(dir + "/ctl.sock")
        #expect(failureMessage(result).contains("is writable by other users"), "\(failureMessage(result))")
        #expect(connections == 0 && bytes == 0)
    }

    @Test("a socket directory owned by another user (nobody), even of mode 0700, is refused")
    func directoryOfAnotherUser() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        try #require(chown(dir, 65534, 65534) == 0)
        let (result, connections, bytes) = try await callFake(dir + "/ctl.sock")
        #expect(failureMessage(result).contains("belongs to uid 65534"), "\(failureMessage(result))")
        #expect(connections == 0 && bytes == 0)
    }

    @Test("a socket directory that is a symbolic link (to a private directory of the user) is refused")
    func symlinkedDirectory() async throws {
        let parent = try makeTemporaryDirectory()
        defer { removeDirectory(parent) }
        let real = parent + "/real"
        mkdir(real, 0o700)
        try #require(symlink(real, parent + "/link") == 0)
        let (result, connections, bytes) = try await callFake(parent + "/link/ctl.sock")
        #expect(failureMessage(result).contains("symbolic link"), "\(failureMessage(result))")
        #expect(connections == 0 && bytes == 0)
    }

    @Test("in a directory others may write to (/tmp), the socket directory must be 0700: 0755 is refused, as for /tmp/handoff-UID")
    func sharedParentNeedsPrivateMode() async throws {
        var template = Array("/tmp/handoff-unit-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        try #require(made != nil)
        let dir = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { removeDirectory(dir) }
        chmod(dir, 0o755)
        let (result, connections, bytes) = try await callFake(dir + "/ctl.sock")
        #expect(failureMessage(result).contains("is readable by other users"), "\(failureMessage(result))")
        #expect(connections == 0 && bytes == 0)
        // The same mode in a directory only the user writes to is fine (socket directories such
        // as $XDG_RUNTIME_DIR/handoff).
        let nested = dir + "/run"
        chmod(dir, 0o700)
        mkdir(nested, 0o755)
        chmod(nested, 0o755)
        let (_, nestedConnections, nestedBytes) = try await callFake(nested + "/ctl.sock")
        #expect(nestedConnections == 1 && nestedBytes > 0)
    }

    @Test("a listener of another uid (nobody) in the user's private directory is refused before any byte is sent (SO_PEERCRED)")
    func listenerOfAnotherUser() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let (result, connections, bytes) = try await callFake(dir + "/ctl.sock", asNobody: true)
        #expect(failureMessage(result).contains("runs as uid 65534"), "\(failureMessage(result))")
        #expect(failureMessage(result).hasPrefix("4609"))
        #expect(connections == 1, "it connected, to learn the listener's uid")
        #expect(bytes == 0, "but sent nothing")
    }

    @Test("an app's stream connection (StreamChannels) makes the same checks")
    func streamConnectionChecks() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let fake = try FakeAgentListener(path: dir + "/ctl.sock", asNobody: true)
        await #expect(throws: ControlSocketError.self) { _ = try await StreamChannels.connect(controlSocket: dir + "/ctl.sock") }
        chmod(dir, 0o777)
        do {
            _ = try await StreamChannels.connect(controlSocket: dir + "/ctl.sock")
            Issue.record("connected through a world-writable directory")
        } catch let error as ControlSocketError {
            #expect(error.reason.contains("is writable by other users"))
        }
        try await Task.sleep(for: .milliseconds(100))
        let (connections, bytes) = fake.stop()
        #expect(connections == 1 && bytes == 0)
    }
}

import Foundation
import XCTest

/// handoffd as a service on simulated hosts: the fixed default peer port and the fallback when it
/// is taken, readiness told to a `NOTIFY_SOCKET` once the DNS-SD registration is up, and syslog
/// priorities on the log lines when `JOURNAL_STREAM` names its standard error.
final class ServiceOnHostsTests: LabTestCase {
    static let defaultPort = 52123

    func port(_ host: String) throws -> Int {
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "status", "--json").stdout.utf8)) as? [String: Any]
        return try XCTUnwrap(status?["port"] as? Int)
    }

    func testDefaultPortAndAnyFreeOneWhenItIsTaken() throws {
        try lab.startAgent("h1", defaultPort: true)
        XCTAssertEqual(try port("h1"), Self.defaultPort)

        let holder = try lab.startLogged("h2", ["python3", "-c", """
            import socket, time
            s = socket.socket(); s.bind(("0.0.0.0", \(Self.defaultPort))); s.listen(); print("listening", flush=True); time.sleep(600)
            """], log: "port-holder")
        defer { _ = try? lab.exec("h2", ["kill", "\(holder.pid)"]) }
        try lab.waitForLine(holder.log, "listening")
        try lab.startAgent("h2", defaultPort: true)
        let taken = try port("h2")
        XCTAssertNotEqual(taken, Self.defaultPort)
        XCTAssertGreaterThan(taken, 0)
        let log = lab.logLines("\(try lab.path("h2"))/handoffd.log")
        XCTAssertTrue(log.contains { $0.contains("warning") && $0.contains("The peer port is taken") && $0.contains("handoff.port=\(taken)") },
                      log.suffix(10).joined(separator: "\n"))
    }

    func testReadyAndStoppingToNotifySocketAndPrioritiesUnderJournal() throws {
        let dir = try lab.path("h1")
        let socketPath = "\(dir)/notify.sock"
        let receiver = try lab.startLogged("h1", ["python3", "-c", """
            import os, socket
            p = "\(socketPath)"
            if os.path.exists(p): os.unlink(p)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(p); print("bound", flush=True)
            for _ in range(2): print(s.recv(256).decode(), flush=True)
            """], log: "notify-receiver")
        defer { _ = try? lab.exec("h1", ["kill", "\(receiver.pid)"]) }
        try lab.waitForLine(receiver.log, "bound")
        try lab.stopAgent("h1")
        // JOURNAL_STREAM names the agent's log file, which is its standard error.
        let agentLog = "\(dir)/handoffd.log"
        if !FileManager.default.fileExists(atPath: agentLog) { _ = FileManager.default.createFile(atPath: agentLog, contents: nil) }
        let stat = try lab.exec("h1", ["stat", "-c", "%d:%i", agentLog]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try lab.startAgent("h1", environment: ["NOTIFY_SOCKET": socketPath, "JOURNAL_STREAM": stat])
        try lab.waitForLine(receiver.log, "READY=1", timeout: 10)
        // This run's lines: after the lab's "====" line that starts it.
        let lines = lab.logLines(agentLog)
        let run = lines[((lines.lastIndex { $0.hasPrefix("====") }) ?? -1) + 1 ..< lines.count]
        XCTAssertTrue(run.contains { $0.hasPrefix("<6>") && $0.contains("Registered") }, "READY=1 before the DNS-SD registration: \(run)")
        XCTAssertTrue(run.contains { $0.hasPrefix("<6>") && $0.contains("handoffd started") }, "\(run)")
        // Its tasks run on its event loop thread, not on Dispatch's pool (TasksOnEventLoop).
        XCTAssertTrue(run.contains { $0.contains("handoffd started") && $0.contains("handoff.tasksOnEventLoop=true") }, "\(run)")
        // SIGTERM ends it gracefully, at once: not after the lab's 5 s grace with SIGKILL (as
        // systemd would after TimeoutStopSec) because a service never finished.
        let started = Date()
        let stop = try lab.lab("agent", "stop", "h1")
        XCTAssertFalse(stop.stdout.contains("SIGKILL") || stop.stderr.contains("SIGKILL"), "\(stop.stdout) \(stop.stderr)")
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "handoffd took that long to stop on SIGTERM")
        try lab.waitForLine(receiver.log, "STOPPING=1", timeout: 10)
    }
}

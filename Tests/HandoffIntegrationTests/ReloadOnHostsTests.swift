import Foundation
import XCTest

/// SIGHUP reloads handoffd's configuration on simulated hosts: a new handler takes the next
/// continuation, a changed port is logged as needing a restart while the agent keeps answering
/// on the old one, and a broken file changes nothing and is logged with its key.
final class ReloadOnHostsTests: LabTestCase {
    static let type = "com.example.reload.note"
    /// h2's port at start; the rewritten file asks for another.
    static let startPort = 52123

    override class func prepare(_ lab: LabDriver) throws {
        // h1 takes every activity with a handler that succeeds (to continue h2's, through h2's port).
        try lab.startAgent("h1", config: ["handlers": [["activityTypes": ["*"], "command": ["/bin/true"]]]])
        // h2 tells a NOTIFY_SOCKET its state, as under systemd; the receiver prints each datagram
        // on a line (and exits after two idle minutes).
        let (log, _) = try lab.startLogged("h2", ["python3", "-c", """
            import os, socket
            p = "\(try notifySocket(lab))"
            if os.path.exists(p): os.unlink(p)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(p); s.settimeout(120); print("bound", flush=True)
            while True: print(s.recv(256).decode().replace("\\n", " "), flush=True)
            """], log: "notify-receiver")
        try lab.waitForLine(log, "bound")
        try lab.startAgent("h2", config: ["port": startPort], environment: ["NOTIFY_SOCKET": try notifySocket(lab)])
        // READY=1 waits for h2's DNS-SD registration; the test's SIGHUP must come after it, as
        // systemd's reload does (a reload before it would send RELOADING=1 first).
        _ = try lab.waitUntil("h2's READY=1", timeout: 15) { lab.logLines(log).contains("READY=1") }
        try lab.pair("h1", "h2")
    }

    static func notifySocket(_ lab: LabDriver) throws -> String { "\(try lab.path("h2"))/notify.sock" }

    /// h2's config file (LabDriver.startAgent's), with `change` applied, written in place.
    func rewriteConfig(_ change: (inout [String: Any]) -> Void) throws -> String {
        let file = "\(try lab.path("h2"))/test-config.json"
        var config = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        change(&config)
        try JSONSerialization.data(withJSONObject: config, options: [.sortedKeys, .withoutEscapingSlashes]).write(to: URL(fileURLWithPath: file))
        return file
    }

    /// Sends SIGHUP to h2's agent and waits for the log line that ends the reload (`marker`);
    /// returns the log lines from this reload on.
    func hangUp(_ marker: String) throws -> [String] {
        let dir = try lab.path("h2")
        let log = "\(dir)/handoffd.log"
        let before = lab.logLines(log).count
        let pid = try String(contentsOfFile: "\(dir)/handoffd.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(kill(try XCTUnwrap(Int32(pid)), SIGHUP), 0)
        var lines: [String] = []
        _ = try lab.waitUntil("\"\(marker)\" in h2's log", timeout: 5) {
            lines = Array(lab.logLines(log).dropFirst(before))
            return lines.contains { $0.contains(marker) }
        }
        return lines
    }

    func port(_ host: String) throws -> Int {
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "status", "--json").stdout.utf8)) as? [String: Any]
        return try XCTUnwrap(status?["port"] as? Int)
    }

    func testReloadAppliesHandlersKeepsThePortAndSurvivesABrokenFile() throws {
        let id = try lab.publish("h1", "--type", Self.type, "--title", "Reloaded note")
        try lab.waitUntilListed(id, on: "h2", timeout: 10)
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").json.errorCode, 4608, "h2 has no handler yet")

        // A new handler and a new port, then SIGHUP.
        let handled = "\(try lab.path("h2"))/handled.json"
        let file = try rewriteConfig { config in
            config["handlers"] = [["activityTypes": [Self.type], "command": ["/bin/sh", "-c", "cat > '\(handled)'"]]]
            config["port"] = 52200
        }
        let reload = try hangUp("configuration reloaded")
        XCTAssertTrue(reload.contains { $0.contains("warning") && $0.contains("needs a restart: port (52123 -> 52200)") && $0.contains(file) },
                      reload.joined(separator: "\n"))
        XCTAssertTrue(reload.contains { $0.contains("configuration reloaded") && $0.contains("handlers") }, reload.joined(separator: "\n"))
        // systemd heard RELOADING=1 with the monotonic time, then READY=1 again.
        let notified = "\(try lab.path("h2"))/notify-receiver.log"
        _ = try lab.waitUntil("READY=1 after RELOADING=1", timeout: 5) { lab.logLines(notified).suffix(2).last == "READY=1" && lab.logLines(notified).count >= 4 }
        let states = lab.logLines(notified)
        XCTAssertEqual(Array(states.prefix(2)), ["bound", "READY=1"], "\(states)")
        let reloading = try XCTUnwrap(states.dropFirst(2).first).split(separator: " ")
        XCTAssertEqual(reloading.first, "RELOADING=1", "\(states)")
        let microseconds = try XCTUnwrap(reloading.last.flatMap { Double($0.dropFirst("MONOTONIC_USEC=".count)) }, "\(states)")
        let uptime = try XCTUnwrap(Double(String(contentsOfFile: "/proc/uptime", encoding: .utf8).split(separator: " ")[0]))
        XCTAssertEqual(microseconds / 1_000_000, uptime, accuracy: 30, "MONOTONIC_USEC is CLOCK_MONOTONIC")
        XCTAssertEqual(states.count, 4, "\(states)")

        let continued = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(continued.status, 0, "\(continued.json)")
        XCTAssertEqual(continued.json["by"] as? String, "handler")
        XCTAssertTrue((try? String(contentsOfFile: handled, encoding: .utf8))?.contains("Reloaded note") == true, "the new handler got the activity")

        // h2 still answers on its old port: h1 continues h2's activity through it.
        XCTAssertEqual(try port("h2"), Self.startPort)
        let fromH2 = try lab.publish("h2", "--type", Self.type, "--title", "From h2")
        try lab.waitUntilListed(fromH2, on: "h1", timeout: 10)
        XCTAssertEqual(try lab.continueActivity(fromH2, on: "h1").status, 0)

        // A broken file: nothing changes, the error names the file and the key.
        try FileManager.default.removeItem(atPath: handled)
        _ = try rewriteConfig { config in
            config["handlers"] = []
            config["limits"] = ["fetchTimeout": -1]
        }
        let refused = try hangUp("nothing was reloaded")
        XCTAssertTrue(refused.contains { $0.contains("error") && $0.contains(file) && $0.contains("limits.fetchTimeout") },
                      refused.joined(separator: "\n"))
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").json["by"] as? String, "handler", "the last good configuration's handler")
        XCTAssertTrue(FileManager.default.fileExists(atPath: handled))
    }
}

import Foundation
import XCTest

/// Liveness on two simulated hosts, paired: h2 notices within 3 s that h1's agent crashed or that
/// h1 was cut off the LAN (DNS-SD would keep h1 listed for up to 75 minutes), and h1 is back
/// within 2 s of its return.
final class LivenessOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2"] { try lab.startAgent(host, config: ["urlOpener": ["true"]]) }
        try lab.pair("h1", "h2")
    }

    /// h1 as `handoff peers --json` on h2 shows it: nil when h2 does not list it.
    func h1(on host: String = "h2") throws -> [String: Any]? {
        let result = try lab.handoff(host, "peers", "--json")
        let peers = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        return peers?.first { $0["name"] as? String == "h1" }
    }

    func h1Reachable() throws -> Bool { try h1()?["reachable"] as? Bool == true }

    /// h2 no longer offers anything from h1: h1 is unreachable, or gone from DNS-SD altogether.
    func h1Silent() throws -> Bool {
        let peer = try h1()
        guard peer == nil || peer?["reachable"] as? Bool == false else { return false }
        let offered = try lab.offered(on: "h2")
        return !offered.contains { $0["peer"] as? String == "h1" }
    }

    func publishOnH1(_ title: String) throws -> String {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", title)
        try lab.waitUntilListed(id, on: "h2")
        return id
    }

    /// Continuing an activity of a silent peer fails at once with 4609, saying why.
    func assertContinueFailsFast(_ id: String) throws {
        let start = Date()
        let (status, response) = try lab.continueActivity(id, on: "h2")
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertEqual(status, 1)
        XCTAssertEqual(response.errorCode, 4609, "\(response)")
        XCTAssertLessThan(elapsed, 1.0, "well under limits.connectTimeout (2 s): \(response)")
        print("liveness: continue of a silent peer's activity failed in \(String(format: "%.3f", elapsed)) s: \(response)")
    }

    /// One connection per pair: h2's liveness connection to h1 carries its continues (fetch and
    /// `continued`), so five continues open no connection more (docs/PROTOCOL.md).
    func testFiveContinuesGoOnTheLivenessConnection() throws {
        try lab.waitUntil("h1 reachable on h2", timeout: 10) { try h1Reachable() }
        let port = try XCTUnwrap(try h1()?["port"] as? Int)
        // A web page: h2's urlOpener (`true`) takes it, no handler needed.
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "one connection", "--webpage-url", "https://example.com/one")
        try lab.waitUntilListed(id, on: "h2")
        try lab.waitUntil("h2's liveness connection to h1 up", timeout: 5) { try lab.connectionsBetweenH2AndH1(h1Port: port).count == 1 }
        for _ in 0..<5 {
            let (status, response) = try lab.continueActivity(id, on: "h2")
            XCTAssertEqual(status, 0, "\(response)")
        }
        let connections = try lab.connectionsBetweenH2AndH1(h1Port: port)
        XCTAssertEqual(connections.count, 1, "liveness and five continues on one connection: \(connections)")
        print("liveness: h2 -> h1 after five continues: \(connections.count) established connection(s)")
    }

    func testKilledAgentIsUnreachableWithin3sAndBackWithin2s() throws {
        try lab.waitUntil("h1 reachable on h2", timeout: 10) { try h1Reachable() }
        let id = try publishOnH1("before the crash")

        try lab.killAgent("h1")
        let killed = Date()
        let detected = try lab.waitUntil("h1 unreachable on h2 after kill -9", timeout: 3) { try h1Silent() }
        print("liveness: kill -9 of h1's agent detected on h2 after \(String(format: "%.3f", detected)) s (h1 \(try h1() == nil ? "withdrawn from DNS-SD" : "listed, unreachable"))")
        let peer = try h1()
        if let peer { XCTAssertEqual(peer["reachable"] as? Bool, false, "\(peer)") }
        XCTAssertFalse(try lab.offered(on: "h2").contains { $0["id"] as? String == id })
        let text = try lab.handoff("h2", "peers").stdout
        if peer != nil { XCTAssertTrue(text.contains("unreachable"), text) }
        try assertContinueFailsFast(id)
        XCTAssertLessThan(Date().timeIntervalSince(killed), 5)

        try lab.startAgent("h1", config: ["urlOpener": ["true"]])
        let back = try lab.waitUntil("h1 reachable again on h2", timeout: 2) { try h1Reachable() }
        print("liveness: h1's restarted agent reachable on h2 after \(String(format: "%.3f", back)) s")
        let again = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "after the restart")
        try lab.waitUntilListed(again, on: "h2", timeout: 5)
    }

    func testLinkDownIsUnreachableWithin3sAndBackWithin2s() throws {
        try lab.waitUntil("h1 reachable on h2", timeout: 10) { try h1Reachable() }
        let id = try publishOnH1("before the link went down")

        try lab.exec("h1", ["ip", "link", "set", "eth0", "down"])
        let detected: TimeInterval
        do {
            detected = try lab.waitUntil("h1 unreachable on h2 after its link went down", timeout: 3) { try h1Silent() }
        } catch {
            try linkUp()
            throw error
        }
        print("liveness: h1's link down detected on h2 after \(String(format: "%.3f", detected)) s")
        let peer = try XCTUnwrap(try h1(), "DNS-SD still lists h1 (no goodbye from a cut-off host)")
        XCTAssertEqual(peer["reachable"] as? Bool, false)
        XCTAssertTrue(try lab.handoff("h2", "peers").stdout.contains("unreachable"))
        XCTAssertFalse(try lab.offered(on: "h2").contains { $0["id"] as? String == id })
        try assertContinueFailsFast(id)
        let (_, response) = try lab.continueActivity(id, on: "h2")
        let message = (response["error"] as? [String: Any])?["message"] as? String ?? ""
        XCTAssertTrue(message.contains("stopped answering") && message.contains("last heard from"), message)

        try linkUp()
        let back = try lab.waitUntil("h1 reachable again on h2 after its link came up", timeout: 2) { try h1Reachable() }
        print("liveness: h1 reachable on h2 after \(String(format: "%.3f", back)) s of its link coming up")
        try lab.waitUntilListed(id, on: "h2", timeout: 1)
    }

    /// h1's link goes down while h2 fetches from it (h1 holds the payload back 20 s): the
    /// continuation fails at once with 4609 "h1 stopped answering", not with 4610 at fetchTimeout.
    func testLinkDownMidContinuationFailsWith4609AtOnce() throws {
        try lab.waitUntil("h1 reachable on h2", timeout: 10) { try h1Reachable() }
        let id = try publishOnH1("cut off mid-continuation")
        try lab.handoff("h1", "fault", "set", "payloadDelayMs=20000")
        defer { _ = try? lab.handoff("h1", "fault", "clear") }
        let continuing = try lab.startLogged("h2", [lab.handoffCLI, "continue", id, "--json"], log: "continue-cut-off")
        Thread.sleep(forTimeInterval: 0.5)  // the fetch is under way: h1 holds the payload back
        let cut = Date()
        try lab.exec("h1", ["ip", "link", "set", "eth0", "down"])
        defer { try? linkUp() }
        var response: [String: Any] = [:]
        let failed = try lab.waitUntil("the continuation on h2 ended", timeout: 6) {
            guard let line = lab.logLines(continuing.log).first,
                  let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return false }
            response = object
            return true
        }
        print("liveness: a continuation in flight failed \(String(format: "%.3f", Date().timeIntervalSince(cut))) s after h1's link went down (waited \(String(format: "%.3f", failed)) s): \(response)")
        XCTAssertEqual(response.errorCode, 4609, "\(response)")
        let message = (response["error"] as? [String: Any])?["message"] as? String ?? ""
        XCTAssertTrue(message.contains("h1 stopped answering"), message)
        XCTAssertLessThan(Date().timeIntervalSince(cut), 5, "liveness (2 s) plus a little, far under fetchTimeout")
        try linkUp()
        try lab.waitUntil("h1 reachable again on h2", timeout: 5) { try h1Reachable() }
    }

    /// Brings h1's eth0 up again with the multicast route `scripts/lab up` gave it (link down drops it).
    func linkUp() throws {
        try lab.exec("h1", ["ip", "link", "set", "eth0", "up"])
        try lab.exec("h1", ["ip", "route", "replace", "224.0.0.0/4", "dev", "eth0"])
    }
}

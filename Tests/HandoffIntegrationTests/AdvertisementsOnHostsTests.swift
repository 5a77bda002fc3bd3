import Foundation
import XCTest

/// Issue 15 item 8 (review findings 10 and 11) on simulated hosts: h1, h2 and h3 are all paired
/// with each other; h3 is the paired device gone bad (it holds h1's advertising key) and a LAN
/// attacker (avahi-publish, raw mDNS). h2 must keep seeing h1 as it is, and continue from it.
final class AdvertisementsOnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h3"] { try lab.startAgent(host) }
        try lab.startAgent("h2", config: HandoffIntegrationTests.continuingConfig(try lab.path("h2")))
        try lab.pair("h1", "h2", "h3")
    }

    var tool: String { lab.packageRoot.appendingPathComponent("scripts/lab-forge-advertisement.py").path }

    func status(_ host: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "status", "--json").stdout.utf8)) as? [String: Any])
    }

    /// h2's view of h1: its instance name, addresses and whether it is reachable.
    func h1OnH2() throws -> [String: Any]? {
        let peers = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "peers", "--json").stdout.utf8)) as? [[String: Any]]
        return peers?.first { $0["name"] as? String == "h1" }
    }

    /// Publishes `activity` on h1 and waits until h2 lists it (h2 has h1's keys by then).
    func publishOnH1(_ title: String) throws -> String {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", title)
        try lab.waitUntilListed(id, on: "h2", timeout: 10)
        return id
    }

    /// Runs avahi-publish on h3 in the background; returns its PID (this test's own process).
    func publishOnH3(instance: String, port: Int, txt: [String]) throws -> Int32 {
        try lab.startBackground("h3", ["avahi-publish", "-s", instance, "_handoff._tcp", "\(port)"] + txt,
                                log: "\(try lab.path("h3"))/avahi-publish-\(UUID().uuidString.prefix(6)).log")
    }

    func stop(_ pid: Int32) { _ = try? lab.exec("h3", ["kill", "\(pid)"]) }

    var h2Log: String { get throws { "\(try lab.path("h2"))/handoffd.log" } }

    /// Waits until h2's log has a line containing `text` after line `mark`.
    func waitForH2Log(_ text: String, after mark: Int, timeout: TimeInterval = 10) throws {
        let log = try h2Log
        do {
            try lab.waitUntil("\"\(text)\" in h2's log", timeout: timeout) { lab.logLines(log).dropFirst(mark).contains { $0.contains(text) } }
        } catch {
            let since = lab.logLines(log).dropFirst(mark)
            throw LabError("\(error); h2's log since: \(since.suffix(40).joined(separator: "\n"))")
        }
    }

    /// h2 lists exactly h1's real activity, reaches h1 at its own address, and continues from it.
    func assertH1IntactOnH2(_ id: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let listed = try lab.offered(on: "h2")
        XCTAssertEqual(listed.map { $0["id"] as? String }, [id], "h2 lists \(listed)", file: file, line: line)
        XCTAssertFalse(listed.contains { ($0["title"] as? String) == "Pay here" }, file: file, line: line)
        let peer = try XCTUnwrap(try h1OnH2(), "h2 no longer lists h1", file: file, line: line)
        XCTAssertEqual(peer["addresses"] as? [String], ["198.18.0.1"], "\(peer)", file: file, line: line)
        XCTAssertEqual(peer["reachable"] as? Bool, true, "\(peer)", file: file, line: line)
        let (code, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(code, 0, "continue from h1 failed: \(response)", file: file, line: line)
    }

    /// h3 holds h1's advertising key (trust.json) and seals a record "from h1" with it, signed
    /// with its own key, under a new instance name and under h1's own (avahi renames that one).
    func testRecordForgedWithH1sKeyByAnotherPairedDeviceIsRefused() throws {
        let id = try publishOnH1("Real from h1")
        let h1 = try status("h1")
        let h1ID = try XCTUnwrap(h1["deviceID"] as? String)
        let h1Instance = try XCTUnwrap(h1["registeredName"] as? String)
        let dir = try lab.path("h3")
        try lab.waitUntil("h3 has learnt h1's advertising key", timeout: 10) {
            let trust = try String(contentsOfFile: "\(dir)/state/trust.json", encoding: .utf8)
            return trust.contains(h1ID) && trust.components(separatedBy: "\"advertisingKey\"").count >= 4
        }
        var publishers: [Int32] = []
        defer { publishers.forEach(stop) }
        for instance in ["handoff-f0f0f0f0f0f0", h1Instance] {
            let forged = try lab.exec("h3", ["python3", tool, "forge", "--trust", "\(dir)/state/trust.json", "--victim", h1ID,
                                             "--signer", "\(dir)/state/identity-key.pem", "--instance", instance,
                                             "--agent-id", try XCTUnwrap(h1["agentID"] as? String)])
            XCTAssertEqual(forged.status, 0, forged.stderr)
            let mark = lab.logLines(try h2Log).count
            publishers.append(try publishOnH3(instance: instance, port: try XCTUnwrap(h1["port"] as? Int),
                                              txt: forged.stdout.split(separator: "\n").map(String.init)))
            try waitForH2Log("ignoring a forged advertisement", after: mark)
            try assertH1IntactOnH2(id)
        }
        try lab.handoff("h1", "resign", id)
    }

    /// A LAN attacker re-announces h1's current TXT under another instance name; later, after h1
    /// and h2 both restarted, h1's old record under its old instance name.
    func testReplayedRecordsAreIgnoredAlsoAfterARestart() throws {
        let oldID = try publishOnH1("Before the restart")
        let h1 = try status("h1")
        let oldInstance = try XCTUnwrap(h1["registeredName"] as? String)
        let port = try XCTUnwrap(h1["port"] as? Int)
        // The record as every host on the LAN sees it.
        var txt: [String] = []
        try lab.waitUntil("h1's record in avahi-browse on h3", timeout: 10) {
            let browse = try lab.exec("h3", ["avahi-browse", "-rpt", "_handoff._tcp"]).stdout
            guard let line = browse.split(separator: "\n").first(where: { $0.hasPrefix("=") && $0.contains(";\(oldInstance);_handoff._tcp;") }),
                let field = line.split(separator: ";", omittingEmptySubsequences: false).last
            else { return false }
            txt = field.split(separator: "\" \"").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            return txt.contains("v=3")
        }
        var mark = lab.logLines(try h2Log).count
        let moved = try publishOnH3(instance: "handoff-000000000000", port: port, txt: txt)
        defer { stop(moved) }
        try waitForH2Log("ignoring a forged advertisement", after: mark)
        try assertH1IntactOnH2(oldID)
        stop(moved)

        // h1 restarts (a new instance name, a newer record), then h2 restarts (its memory is gone).
        try lab.startAgent("h1")
        let newID = try publishOnH1("After the restart")
        try lab.startAgent("h2", config: HandoffIntegrationTests.continuingConfig(try lab.path("h2")))
        try lab.waitUntilListed(newID, on: "h2", timeout: 10)
        mark = lab.logLines(try h2Log).count
        let replay = try publishOnH3(instance: oldInstance, port: port, txt: txt)
        defer { stop(replay) }
        try waitForH2Log("ignoring a replayed advertisement", after: mark)
        try assertH1IntactOnH2(newID)
        XCTAssertNotEqual(try h1OnH2()?["instanceName"] as? String, oldInstance)
        try lab.handoff("h1", "resign", newID)
    }

    /// Any LAN host can send a goodbye for h1's instance; h1 still answers liveness, so h2 keeps it.
    /// When h1 really stops, h2 drops it once liveness finds it gone.
    func testSpoofedGoodbyeLeavesH1Listed() throws {
        let id = try publishOnH1("Still here")
        // h2 may list it (pushed) before h1's just restarted agent has its DNS-SD registration.
        try lab.waitUntil("h1's service registered", timeout: 10) { try status("h1")["registeredName"] as? String != nil }
        let instance = try XCTUnwrap(try status("h1")["registeredName"] as? String)
        let mark = lab.logLines(try h2Log).count
        // Avahi on h1 hears the goodbye for its own record too and may announce it again before
        // h2's cache drops it (a goodbye leaves the record 1 s): then h2 never sees a removal at
        // all. So the goodbye is sent until h2's agent has acted on one (at most 4 times); either
        // way h1 must stay listed, reachable and continuable.
        var heard = false
        for _ in 0..<4 where !heard {
            let sent = try lab.exec("h3", ["python3", tool, "goodbye", "--instance", instance])
            XCTAssertEqual(sent.status, 0, sent.stderr)
            heard = (try? waitForH2Log("goodbye for a paired peer that still answers", after: mark, timeout: 3)) != nil
        }
        print("spoofed goodbye for h1's instance \(instance): \(heard ? "h2's agent kept h1 (liveness still answers)" : "h2's Avahi never dropped the record (h1 defended it)")")
        Thread.sleep(forTimeInterval: 3)  // longer than liveness.timeout (2 s)
        try assertH1IntactOnH2(id)
        try lab.handoff("h1", "resign", id)

        // A real goodbye: h1 is gone within liveness.timeout and a little.
        try lab.stopAgent("h1")
        let elapsed = try lab.waitUntil("h1 gone from h2", timeout: 8) { try h1OnH2() == nil }
        print("h1 gone from h2 \(Int(elapsed * 1000)) ms after it stopped")
        try lab.startAgent("h1")
        try lab.waitUntil("h1 back on h2", timeout: 10) { try h1OnH2() != nil }
    }
}

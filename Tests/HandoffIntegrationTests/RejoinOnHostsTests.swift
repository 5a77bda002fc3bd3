import Foundation
import XCTest

/// An agent that restarts is back on its paired devices at once (issue 21, item 1): it reaches
/// them at the addresses they were last found at, subscribes to their advertisements and
/// announces itself (`announce`), before DNS-SD shows anything. To show that path alone, mDNS is
/// dropped on both hosts before h1's agent restarts, and h1's avahi-daemon is restarted (its cache
/// emptied): after the restart, DNS-SD shows nothing either way. (The rulesets are the hosts'
/// network namespaces' own: the machine's is never touched.)
final class RejoinOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }
    static let type = "com.example.rejoin.edit"  // not the notes example's: its continuations go to the app
    static var config: [String: Any] { ["urlOpener": ["true"], "handlers": [["activityTypes": [type], "command": ["true"]]]] }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2"] { try lab.startAgent(host, config: config) }
        try lab.pair("h1", "h2")
    }

    func peer(_ name: String, on host: String) throws -> [String: Any]? {
        let output = try lab.handoff(host, "peers", "--json").stdout
        let peers = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], output)
        return peers.first { $0["name"] as? String == name }
    }

    func testRestartedAgentIsBackWithoutDNSSD() throws {
        // Each has found the other over DNS-SD, and keeps where (trust.json's lastKnown).
        let before = try lab.publish("h1", "--type", Self.type, "--title", "Before the restart")
        try lab.waitUntilListed(before, on: "h2", timeout: 10)
        try lab.waitUntil("h1 lists h2", timeout: 10) { try peer("h2", on: "h1") != nil }
        for host in ["h1", "h2"] {
            let trust = try String(contentsOfFile: "\(try lab.path(host))/state/trust.json", encoding: .utf8)
            XCTAssertTrue(trust.contains("\"lastKnown\""), "\(host)'s trust store keeps no address: \(trust)")
            for command in ["add table inet rejointest",
                            "add chain inet rejointest input { type filter hook input priority 0; policy accept; }",
                            "add rule inet rejointest input udp dport 5353 drop"] {
                let result = try lab.exec(host, ["nft", command])
                XCTAssertEqual(result.status, 0, "nft \(command) on \(host): \(result.stderr)")
            }
        }
        try lab.stopAgent("h1")
        let restartedAvahi = try lab.lab("avahi", "restart", "h1")
        XCTAssertEqual(restartedAvahi.status, 0, restartedAvahi.stderr)

        let started = Date()
        try lab.startAgent("h1", config: Self.config)  // a new ephemeral port: h2 learns it from the announce
        let after = try lab.publish("h1", "--type", Self.type, "--title", "After the restart")
        let listed = try lab.waitUntilListed(after, on: "h2", timeout: 3)
        print("rejoin: h2 listed h1's new activity \(String(format: "%.0f", Date().timeIntervalSince(started) * 1000)) ms after h1's agent was started (\(String(format: "%.0f", listed * 1000)) ms after the publish), with mDNS dropped")
        let h1OnH2 = try XCTUnwrap(try peer("h1", on: "h2"))
        XCTAssertEqual(h1OnH2["via"] as? String, "address", "\(h1OnH2)")
        XCTAssertEqual(h1OnH2["reachable"] as? Bool, true, "\(h1OnH2)")
        let h2OnH1 = try XCTUnwrap(try peer("h2", on: "h1"), "h1 reached h2 at its last known address")
        XCTAssertEqual(h2OnH1["via"] as? String, "address", "\(h2OnH1)")
        let h2Log = try String(contentsOfFile: "\(try lab.path("h2"))/handoffd.log", encoding: .utf8)
        XCTAssertTrue(h2Log.contains("a paired device announced it is back"), "h2's log: \(h2Log.suffix(2000))")

        // Continuing works over the announced endpoint, and h1's next activity reaches h2 too.
        let (status, json) = try lab.continueActivity(after, on: "h2")
        XCTAssertEqual(status, 0, "\(json)")
        XCTAssertEqual(json["peer"] as? String, "h1")
        let next = try lab.publish("h1", "--type", Self.type, "--title", "Next")
        try lab.waitUntilListed(next, on: "h2", timeout: 3)
    }

    /// Paired devices often start together (a power cut, a network that came back): one that
    /// starts a few seconds after its peer is found at its last known address by the peer that
    /// started first, which goes on trying there for the rejoin window (docs/PROTOCOL.md,
    /// "Rejoining after a start"). Both listen on the default port, as an install does; mDNS is
    /// dropped, and h2 is made to forget where h1 was, so only h1's attempts can bring them
    /// together.
    func testPeerThatStartsLaterIsFoundAtItsLastKnownAddress() throws {
        let fixed = Self.config.merging(["port": 52123]) { $1 }
        for host in ["h1", "h2"] { try lab.startAgent(host, config: fixed) }
        try lab.waitUntil("each lists the other over DNS-SD", timeout: 10) {
            try peer("h2", on: "h1")?["port"] as? Int == 52123 && peer("h1", on: "h2")?["port"] as? Int == 52123
        }
        try lab.waitUntil("h1 keeps where h2 was", timeout: 5) {
            let trust = try String(contentsOfFile: "\(try lab.path("h1"))/state/trust.json", encoding: .utf8)
            return trust.contains("52123")
        }
        for host in ["h1", "h2"] {
            try lab.stopAgent(host)
            for command in ["add table inet rejoinlater",
                            "add chain inet rejoinlater input { type filter hook input priority 0; policy accept; }",
                            "add rule inet rejoinlater input udp dport 5353 drop"] {
                let result = try lab.exec(host, ["nft", command])
                XCTAssertEqual(result.status, 0, "nft \(command) on \(host): \(result.stderr)")
            }
            XCTAssertEqual(try lab.lab("avahi", "restart", host).status, 0)
        }
        defer { for host in ["h1", "h2"] { _ = try? lab.exec(host, ["nft", "delete table inet rejoinlater"]) } }
        // h2 forgets where h1 was: it cannot rejoin h1 itself.
        let h2Trust = "\(try lab.path("h2"))/state/trust.json"
        let forget = try lab.exec("h2", ["python3", "-c", """
            import json, sys
            p = sys.argv[1]; t = json.load(open(p))
            for d in t.get("devices", []): d.pop("lastKnown", None)
            json.dump(t, open(p, "w"))
            """, h2Trust])
        XCTAssertEqual(forget.status, 0, forget.stderr)
        try lab.startAgent("h1", config: fixed)
        Thread.sleep(forTimeInterval: 3)  // h1's first attempts at h2's address are refused
        let started = Date()
        try lab.startAgent("h2", config: fixed)
        let found = try lab.waitUntil("h1 reaches h2 where it was, and each lists the other", timeout: 5) {
            try peer("h2", on: "h1") != nil && peer("h1", on: "h2") != nil
        }
        print("rejoin: h2, started 3 s after h1, listed both ways \(String(format: "%.0f", Date().timeIntervalSince(started) * 1000)) ms after its start (\(String(format: "%.0f", found * 1000)) ms of waiting), with mDNS dropped")
        XCTAssertEqual(try peer("h2", on: "h1")?["via"] as? String, "address")
        XCTAssertEqual(try peer("h1", on: "h2")?["via"] as? String, "address")
    }
}

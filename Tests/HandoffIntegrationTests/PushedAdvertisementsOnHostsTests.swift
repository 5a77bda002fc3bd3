import Foundation
import XCTest

/// Issue 21 on two simulated hosts, paired, with real avahi-daemons: h2's liveness connection to
/// h1 (found over DNS-SD) subscribes to h1's advertisement, so each activity h1 publishes or
/// withdraws shows on h2 over that connection, not at Avahi's next announcement (0.03-4.1 s
/// measured right after a change before; bimodal on Avahi's timers).
final class PushedAdvertisementsOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }
    static let type = "com.example.notes.edit"

    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1")
        try lab.startAgent("h2", config: ["logLevel": "debug"])
        try lab.pair("h1", "h2")
    }

    /// Publishes and withdraws on h1 several times in a row: each shows in h2's watch within 1 s
    /// of the command being started (seen by polling the watch's output every 50 ms).
    func testPublishAndWithdrawReachThePeerPushed() throws {
        let watch = try startWatch("watch-pushed")
        defer { _ = try? lab.exec("h2", ["kill", "\(watch.pid)"]) }
        let first = try lab.publish("h1", "--type", Self.type, "--title", "Found by DNS-SD")
        try waitForEvent(watch.log, "activityOffered", timeout: 10) { $0["id"] as? String == first }
        let h1Log = "\(try lab.path("h1"))/handoffd.log"
        try lab.waitUntil("h2 subscribed to h1's advertisement", timeout: 10) {
            lab.logLines(h1Log).contains { $0.contains("peer subscribed to the advertisement") }
        }
        try lab.handoff("h1", "resign", first)
        try waitForEvent(watch.log, "activityWithdrawn", timeout: 10) { $0["id"] as? String == first }

        var delays: [(String, TimeInterval)] = []
        for round in 1...5 {
            let published = Date()
            let id = try lab.publish("h1", "--type", Self.type, "--title", "Pushed \(round)")
            let offered = try waitForEvent(watch.log, "activityOffered", timeout: 10) { $0["id"] as? String == id }.seenAt
            delays.append(("offered \(round)", offered.timeIntervalSince(published)))
            let resigned = Date()
            try lab.handoff("h1", "resign", id)
            let withdrawn = try waitForEvent(watch.log, "activityWithdrawn", timeout: 10) { $0["id"] as? String == id }.seenAt
            delays.append(("withdrawn \(round)", withdrawn.timeIntervalSince(resigned)))
            let listed = try lab.offered(on: "h2")
            XCTAssertTrue(listed.isEmpty, "round \(round): h2 still lists \(listed)")
        }
        print("pushed: " + delays.map { "\($0.0) \(String(format: "%.0f", $0.1 * 1000)) ms" }.joined(separator: ", ") + " (command and 50 ms poll included)")
        for (what, delay) in delays { XCTAssertLessThan(delay, 1.0, "\(what) took \(delay) s: DNS-SD's time, not the push's") }
        let peers = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "peers", "--json").stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(peers.first { $0["name"] as? String == "h1" }?["via"] as? String, "dns-sd", "DNS-SD stays the way to h1: \(peers)")
    }

    /// While h1 pushes its records to h2, h2 keeps no TXT query open for h1's instance: with
    /// Avahi's dns_sd library every query is a thread of h2's agent and a system-bus connection of
    /// its own. When the pushes stop (h1's TCP dropped by nftables, mDNS still flowing), h2 queries
    /// the record again; when they come back, it closes that query again. Counted in the agent's
    /// threads (the library's threads take the name of the browser's poller, `dnssd-browser`).
    func testNoTXTQueryIsKeptWhileThePeerPushes() throws {
        let h2Log = "\(try lab.path("h2"))/handoffd.log"
        func browserThreads() throws -> Int { try lab.agentThreads("h2", named: "dnssd-browser") }
        func count(_ line: String) -> Int { lab.logLines(h2Log).filter { $0.contains(line) }.count }
        let closed = "TXT query closed: the peer pushes its record", reopened = "Querying the TXT record again: the peer no longer pushes it"
        try lab.waitUntil("h2 to close its TXT query for h1", timeout: 15) { count(closed) >= 1 }
        Thread.sleep(forTimeInterval: 1)
        let pushed = try browserThreads()
        let closedBefore = count(closed)

        try nft("h1", "add table inet pushcut")
        var cut = true
        defer { if cut { _ = try? lab.exec("h1", ["nft", "delete table inet pushcut"]) } }
        try nft("h1", "add chain inet pushcut input { type filter hook input priority 0; policy accept; }")
        try nft("h1", "add chain inet pushcut output { type filter hook output priority 0; policy accept; }")
        try nft("h1", "add rule inet pushcut input meta l4proto tcp drop")
        try nft("h1", "add rule inet pushcut output meta l4proto tcp drop")
        try lab.waitUntil("h2 to query h1's TXT record again once the pushes stop", timeout: 20) { count(reopened) >= 1 }
        try lab.waitUntil("one more browser thread in h2 (\(pushed + 1))", timeout: 10) { try browserThreads() == pushed + 1 }

        try nft("h1", "delete table inet pushcut")
        cut = false
        try lab.waitUntil("h2 to close the TXT query again once h1 pushes again", timeout: 20) { count(closed) > closedBefore }
        try lab.waitUntil("h2's browser threads back to \(pushed)", timeout: 10) { try browserThreads() == pushed }
        print("h2's dnssd-browser threads: \(pushed) while h1 pushes, \(pushed + 1) while it does not")
    }
}

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
        for host in ["h1", "h2"] { try lab.startAgent(host) }
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
}

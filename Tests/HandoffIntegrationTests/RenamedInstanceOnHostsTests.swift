import Foundation
import XCTest

/// A real Avahi rename on three simulated hosts: h3 holds the instance name of h1's agent while
/// h1's link is down (`avahi-publish-service`, so h3's avahi-daemon defends it), and when the link
/// comes back h1's avahi-daemon finds the name taken and renames h1's service (`"X"` → `"X #2"`).
/// The advertisement is signed for the instance name, so h1's agent seals it again for the new
/// name at once; h2, paired, lists h1 under it within about a second and never calls its record
/// forged; h1's `handoff doctor` finds its own service under the new name.
final class RenamedInstanceOnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2"] { try lab.startAgent(host) }
        try lab.pair("h1", "h2")
    }

    /// `handoff status --json` on h1: the name its service is registered under.
    func registeredName() throws -> String? {
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h1", "status", "--json").stdout.utf8)) as? [String: Any]
        return status?["registeredName"] as? String
    }

    /// `handoff peers --json` on h2: the instance names and routes it shows h1 under.
    func h1OnH2() throws -> [(instance: String, via: String)] {
        let data = Data(try lab.handoff("h2", "peers", "--json").stdout.utf8)
        let peers = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
        return peers.filter { $0["name"] as? String == "h1" }.compactMap { peer in
            (peer["instanceName"] as? String).map { ($0, peer["via"] as? String ?? "") }
        }
    }

    func testRenamedInstanceIsSealedAgainAndListedByThePeer() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Before the rename")
        try lab.waitUntilListed(id, on: "h2", timeout: 10)
        let original = try XCTUnwrap(try registeredName(), "h1's service is registered")
        XCTAssertEqual(try h1OnH2().map(\.instance), [original])
        let h2Log = "\(try lab.path("h2"))/handoffd.log"
        let h1Log = "\(try lab.path("h1"))/handoffd.log"
        let (h2LinesBefore, h1LinesBefore) = (lab.logLines(h2Log).count, lab.logLines(h1Log).count)

        // h3 takes the name while h1 cannot defend it, then h1 comes back.
        try lab.lab("link", "down", "h1")
        let publisher = try startLogged("h3", ["avahi-publish-service", original, "_handoff._tcp", "9"], log: "conflicting-service")
        try lab.waitForLine(publisher, "Established under name '\(original)'", timeout: 10)
        let linkUp = Date()
        try lab.lab("link", "up", "h1")

        var renamed = ""
        let renamedAfter = try lab.waitUntil("h1's service renamed", timeout: 10) {
            guard let name = try registeredName(), name != original else { return false }
            renamed = name
            return true
        }
        XCTAssertTrue(renamed.hasPrefix(original + " #"), "Avahi's rename: \(renamed)")
        // Measured from when the rename was seen on h1 (polled, so a little after it happened).
        let renameSeen = linkUp.addingTimeInterval(renamedAfter)
        try lab.waitUntil("h2 shows h1 under \(renamed)", timeout: 10) { try h1OnH2().map(\.instance) == [renamed] }
        let listedAfter = Date().timeIntervalSince(renameSeen)
        print("renamed \(String(format: "%.2f", renamedAfter)) s after the link came up; h2 showed the new name \(String(format: "%.3f", listedAfter)) s after the rename was seen")
        XCTAssertLessThan(listedAfter, 1.2, "h2 shows h1 under its new name within about a second of the rename")
        XCTAssertTrue(try lab.offered(on: "h2").contains { $0["id"] as? String == id }, "h2 still lists h1's activity")

        // What h1 publishes now reaches h2 under the new name.
        let after = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "After the rename")
        try lab.waitUntilListed(after, on: "h2", timeout: 5)
        XCTAssertEqual(try h1OnH2().map(\.instance), [renamed])
        let ownAfter = try lab.waitUntil("h1's doctor finds its own service as \(renamed)", timeout: 10) {
            let result = try lab.handoff("h1", "doctor", "--json")
            let findings = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: String]] ?? []
            return findings.contains { $0["check"] == "own-service" && $0["status"] == "ok" && ($0["detail"] ?? "").hasPrefix(renamed) }
        }
        print("h1's doctor found its own service \(String(format: "%.2f", Date().timeIntervalSince(renameSeen))) s after the rename was seen (\(String(format: "%.2f", ownAfter)) s of asking)")

        let h2Lines = lab.logLines(h2Log).dropFirst(h2LinesBefore)
        let h1Lines = lab.logLines(h1Log).dropFirst(h1LinesBefore)
        XCTAssertFalse(h2Lines.contains { $0.contains("forged") }, "h2 called h1's record forged:\n\(h2Lines.joined(separator: "\n"))")
        XCTAssertFalse(h2Lines.contains { $0.contains("no longer reached at its address") }, "h2's route to h1 flipped:\n\(h2Lines.joined(separator: "\n"))")
        XCTAssertTrue(h1Lines.contains { $0.contains("sealing the advertisement for the instance name DNS-SD registered") && $0.contains(renamed) },
                      "h1 sealed its record for \(renamed):\n\(h1Lines.joined(separator: "\n"))")
    }
}

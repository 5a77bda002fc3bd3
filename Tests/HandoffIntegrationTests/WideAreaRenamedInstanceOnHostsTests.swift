import Foundation
import XCTest

/// A real Avahi rename seen through wide-area DNS-SD: h1 (198.18.1.0/24) and h2 (198.18.2.0/24)
/// register and browse in `handoff.test.` on the router's BIND 9, and no multicast crosses the
/// router, so h2 knows h1 only from the zone. h3, on h1's link, holds h1's instance name while
/// h1's link is down (`avahi-publish-service`, as in ``RenamedInstanceOnHostsTests``), and h1's
/// avahi-daemon renames h1's service (`"X"` → `"X #2"`) when the link comes back. h1's agent seals
/// its record for the new name, and its registrar moves the zone's records to it in one update: h2
/// lists h1 under the new name, never calls its record forged, and the zone holds nothing under the
/// old name. A restart of h1's avahi-daemon once h3 let the name go registers it as `"X"` again, and
/// the zone follows back; h1's stop removes everything.
final class WideAreaRenamedInstanceOnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }
    override class var topology: LabTopology { .twoSubnets(.unicast) }

    static let domain = SubnetsOnHostsTests.domain
    static let service = "_handoff._tcp.\(domain)"

    override class func prepare(_ lab: LabDriver) throws {
        try lab.lab("dns", "start", domain, SubnetsOnHostsTests.keyName, SubnetsOnHostsTests.secret)
        for host in ["h1", "h2"] { try lab.startAgent(host, config: SubnetsOnHostsTests.wideAreaConfig()) }
        try lab.pair("h1", "h2")
    }

    /// What the router's BIND answers for `name`/`type`, asked from h2, with BIND's `\032` for a
    /// space read back as a space.
    func dig(_ name: String, _ type: String) throws -> [String] {
        let query = name.replacingOccurrences(of: " ", with: "\\032")
        return try lab.exec("h2", ["dig", "+short", "@198.18.2.254", query, type]).stdout.split(separator: "\n")
            .map { $0.replacingOccurrences(of: "\\032", with: " ") }
    }

    /// The instances the zone lists (its PTR records' targets, without the service type), but h2's own.
    func instancesInZone() throws -> Set<String> {
        let h2 = try XCTUnwrap(try lab.registeredStatus("h2")["registeredName"] as? String)
        return Set(try dig(Self.service, "PTR").compactMap { $0.hasSuffix("." + Self.service) ? String($0.dropLast(Self.service.count + 1)) : nil })
            .subtracting([h2])
    }

    /// What the zone holds at `instance`'s name (SRV and TXT).
    func recordsAt(_ instance: String) throws -> [String] {
        try dig("\(instance).\(Self.service)", "SRV") + dig("\(instance).\(Self.service)", "TXT")
    }

    /// `handoff status --json` on h1: the name its service is registered under over mDNS.
    func registeredName() throws -> String? {
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h1", "status", "--json").stdout.utf8)) as? [String: Any]
        return status?["registeredName"] as? String
    }

    /// `handoff peers --json` on h2: the instance names it shows h1 under.
    func h1OnH2() throws -> [String] {
        let peers = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "peers", "--json").stdout.utf8)) as? [[String: Any]] ?? []
        return peers.filter { $0["name"] as? String == "h1" }.compactMap { $0["instanceName"] as? String }
    }

    /// Waits until the zone lists `instance` as h1's only instance, and h2 shows h1 under it.
    func waitForZoneAndPeer(_ instance: String, timeout: TimeInterval = 10) throws {
        try lab.waitUntil("the zone lists h1 as \(instance) only", timeout: timeout) { try instancesInZone() == [instance] }
        try lab.waitUntil("h2 shows h1 under \(instance)", timeout: timeout) { try h1OnH2() == [instance] }
    }

    func testRenamedInstanceMovesInTheZoneAndTheWideAreaPeerListsIt() throws {
        let original = try XCTUnwrap(try lab.registeredStatus("h1")["registeredName"] as? String)
        let port = try peerPort("h1")
        let before = try lab.publish("h1", "--type", SubnetsOnHostsTests.type, "--title", "Before the rename")
        try lab.waitUntilListed(before, on: "h2", timeout: 10)
        try waitForZoneAndPeer(original)
        let h2Log = "\(try lab.path("h2"))/handoffd.log"
        let h2LinesBefore = lab.logLines(h2Log).count

        // h3 takes the name on h1's link while h1 cannot defend it; h1 comes back and is renamed.
        try lab.lab("link", "down", "h1")
        let (publisher, publisherPID) = try lab.startLogged("h3", ["avahi-publish-service", original, "_handoff._tcp", "9"], log: "conflicting-service")
        started.append(publisherPID)
        try lab.waitForLine(publisher, "Established under name '\(original)'", timeout: 10)
        try lab.lab("link", "up", "h1")
        var renamed = ""
        try lab.waitUntil("h1's service renamed", timeout: 10) {
            guard let name = try registeredName(), name != original else { return false }
            renamed = name
            return true
        }
        XCTAssertTrue(renamed.hasPrefix(original + " #"), "Avahi's rename: \(renamed)")
        let renameSeen = Date()

        // The zone moves to the new name; nothing stays under the old one.
        try waitForZoneAndPeer(renamed)
        print("wide-area rename: the zone and h2 show h1 as \(renamed) \(String(format: "%.2f", Date().timeIntervalSince(renameSeen))) s after the rename was seen")
        XCTAssertEqual(try recordsAt(original), [], "no SRV or TXT left under \(original)")
        XCTAssertEqual(try dig("\(renamed).\(Self.service)", "SRV"), ["0 0 \(port) \(original).\(Self.domain)"],
                       "the renamed instance's SRV: h1's port, on h1's host name, which a rename keeps")
        XCTAssertEqual(try dig("\(original).\(Self.domain)", "A"), ["198.18.1.1"])
        XCTAssertTrue(try lab.offered(on: "h2").contains { $0["id"] as? String == before }, "h2 still lists h1's activity")
        let after = try lab.publish("h1", "--type", SubnetsOnHostsTests.type, "--title", "After the rename")
        try lab.waitUntilListed(after, on: "h2", timeout: 5)
        let (status, response) = try lab.continueActivity(after, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")

        // h3 lets the name go and h1's avahi-daemon restarts: h1's service is registered under
        // its own name again, and the zone follows.
        kill(publisherPID, SIGTERM)
        try lab.lab("avahi", "restart", "h1")
        try lab.waitUntil("h1's service registered as \(original) again", timeout: 15) { try registeredName() == original }
        try waitForZoneAndPeer(original)
        XCTAssertEqual(try recordsAt(renamed), [], "no SRV or TXT left under \(renamed)")
        let back = try lab.publish("h1", "--type", SubnetsOnHostsTests.type, "--title", "Back under the first name")
        try lab.waitUntilListed(back, on: "h2", timeout: 5)

        // Each move was one update: the old name's records removed where the new ones are added.
        let registrar = lab.logLines("\(try lab.path("h1"))/handoffd.log").filter { $0.contains("wide-area DNS-SD:") }
        print("h1's registrar:\n" + registrar.joined(separator: "\n"))
        for (from, to) in [(original, renamed), (renamed, original)] {
            XCTAssertTrue(registrar.contains { $0.contains("registration (renamed from \(from)) of \(to) in \(Self.domain) accepted") },
                          "h1 moved its records from \(from) to \(to) in one update:\n\(registrar.joined(separator: "\n"))")
        }

        let h2Lines = lab.logLines(h2Log).dropFirst(h2LinesBefore)
        XCTAssertFalse(h2Lines.contains { $0.contains("forged") }, "h2 called h1's record forged:\n\(h2Lines.joined(separator: "\n"))")

        // The stop removes h1's records, under the name they are registered under.
        try lab.stopAgent("h1")
        XCTAssertEqual(try instancesInZone(), [], "h1's stop removed its PTR")
        XCTAssertEqual(try recordsAt(original) + recordsAt(renamed), [])
        XCTAssertEqual(try dig("\(original).\(Self.domain)", "A"), [], "and its A record")
    }
}

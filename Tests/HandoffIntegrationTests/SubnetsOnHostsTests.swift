import Foundation
import XCTest

/// Two subnets joined by a router (issue 18, item 6): h1 and h3 on 198.18.1.0/24, h2 on
/// 198.18.2.0/24, router `r` between them.
///
/// - ``SubnetsOnHostsTests``: the router forwards unicast only, so mDNS stays on its link: h2
///   sees nothing of h1 over DNS-SD (h3, on h1's link, does), and pairs with it by address.
/// - ``SubnetsThroughReflectorOnHostsTests``: the router runs Avahi's reflector: h1 and h2 pair
///   by name, and listing, continuing, a continuation stream and `watch` work across it.
final class SubnetsOnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }
    override class var topology: LabTopology { .twoSubnets(.unicast) }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2", "h3"] { try lab.startAgent(host, config: ["urlOpener": ["true"]]) }
    }

    /// The peer port a host's agent listens on, from `handoff status --json`.
    func peerPort(_ host: String) throws -> Int {
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "status", "--json").stdout.utf8)) as? [String: Any]
        return try XCTUnwrap(status?["port"] as? Int)
    }

    func testDNSSDShowsNothingAcrossAndPairingByAddressWorks() throws {
        let accept = try startPair(on: "h1", ["--accept"])
        // h3, on h1's link, sees h1 accepting: the advertisement is out. h2 sees nothing of it.
        try lab.waitUntil("h3 sees h1 accepting pairing", timeout: 5) {
            try lab.handoff("h3", "pair", "--list").stdout.contains("h1")
        }
        XCTAssertFalse(try lab.handoff("h2", "pair", "--list").stdout.contains("h1"), "no multicast crosses the router")
        // h2's avahi-daemon resolves its own agent's service only, none on 198.18.1.0/24.
        let browse = try lab.exec("h2", ["avahi-browse", "--terminate", "--resolve", "--parsable", "_handoff._tcp"])
        let resolved = browse.stdout.split(separator: "\n").filter { $0.hasPrefix("=") }
        XCTAssertEqual(resolved.count, 1, browse.stdout)
        XCTAssertFalse(browse.stdout.contains("198.18.1."), "h2 sees nothing of h1's link over DNS-SD: \(browse.stdout)")

        let address = "198.18.1.1:\(try peerPort("h1"))"
        let initiate = try startPair(on: "h2", [address])
        XCTAssertEqual(try code(initiate), try code(accept), "both sides show the same code")
        try answer(initiate, "y")
        try answer(accept, "y")
        try finished(initiate, containing: "paired with h1")
        try finished(accept, containing: "paired with h2")
        let list = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "trust", "list", "--json").stdout.utf8)) as? [[String: Any]]
        let h1 = try XCTUnwrap(list?.first { $0["deviceID"] as? String == (try? lab.deviceID("h1")) }, "h2 trusts h1: \(list ?? [])")
        XCTAssertEqual(h1["addresses"] as? [String], [address], "h2 remembers where h1 is")
    }
}

final class SubnetsThroughReflectorOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }
    override class var topology: LabTopology { .twoSubnets(.reflector) }
    var notes: String { lab.binDirectory.appendingPathComponent("notes-example").path }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2"] { try lab.startAgent(host, config: ["urlOpener": ["true"]]) }
    }

    /// The JSON events a background `handoff watch --json` wrote so far.
    func events(_ log: String) -> [[String: Any]] {
        lab.logLines(log).compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    func testPairListContinueStreamAndWatchAcrossTheReflector() throws {
        // Pairing by name: h2 learns of h1 accepting over mDNS, through the reflector.
        let accept = try startPair(on: "h1", ["--accept"])
        try lab.waitUntil("h2 sees h1 accepting pairing", timeout: 5) {
            try lab.handoff("h2", "pair", "--list").stdout.contains("h1")
        }
        let initiate = try startPair(on: "h2", ["h1"])
        XCTAssertEqual(try code(initiate), try code(accept), "both sides show the same code")
        try answer(initiate, "y")
        try answer(accept, "y")
        try finished(initiate, containing: "paired with h1")
        try finished(accept, containing: "paired with h2")

        // A watch on h2, in place once it shows h2's own pause.
        let watch = try startLogged("h2", [lab.handoffCLI, "watch", "--json"], log: "watch")
        try lab.waitUntil("the watch on h2 in place", timeout: 10) {
            try lab.handoff("h2", "pause")
            return events(watch).contains { $0["event"] as? String == "paused" }
        }
        try lab.handoff("h2", "resume")

        // The notes app continues a note and reads its attachment over a continuation stream.
        let viewer = try startLogged("h2", [notes, "open", "--read-streams"], log: "viewer")
        try lab.waitForLine(viewer, "ready")
        let editor = try startLogged("h1", [notes, "edit", "--title", "Across", "--text", "two subnets", "--stream-bytes", "\(1 << 20)"], log: "editor")
        try lab.waitForLine(editor, "editing")
        let line = try XCTUnwrap(lab.logLines(editor).first { $0.hasPrefix("editing") })
        let id = try XCTUnwrap(line.split(separator: " ").first { $0.count == 36 }.map(String.init))
        let elapsed = try lab.waitUntilListed(id, on: "h2", timeout: 2)
        print("reflector: h1's activity listed on h2 after \(Int(elapsed * 1000)) ms")
        XCTAssertTrue(events(watch).contains { $0["event"] as? String == "activityOffered" && $0["id"] as? String == id },
                      "the watch saw the offer: \(events(watch))")

        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(response["by"] as? String, "app")
        try lab.waitForLine(editor, "sent")
        try lab.waitForLine(viewer, "received")
        let sent = try XCTUnwrap(lab.logLines(editor).first { $0.hasPrefix("sent") })
        let received = try XCTUnwrap(lab.logLines(viewer).first { $0.hasPrefix("received") })
        XCTAssertTrue(received.hasPrefix(sent.replacingOccurrences(of: "sent", with: "received")), "\(sent) / \(received)")
        try lab.waitUntil("the watch sees the continuation", timeout: 5) {
            events(watch).contains { $0["event"] as? String == "continued" && $0["id"] as? String == id }
        }
    }
}

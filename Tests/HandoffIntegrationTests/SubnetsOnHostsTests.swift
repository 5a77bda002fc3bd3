import Foundation
import XCTest

/// Two subnets joined by a router (issue 18, item 6): odd hosts on 198.18.1.0/24, even hosts on
/// 198.18.2.0/24, router `r` between them.
///
/// - ``SubnetsOnHostsTests``: the router forwards unicast only, so mDNS stays on its link: h2
///   sees nothing of h1 over DNS-SD (h3, on h1's link, does), and pairs with it by address.
///   With BIND 9 on the router, wide-area DNS-SD: h3 registers in `handoff.test.` by signed
///   dynamic update, h4 browses the domain and lists and continues h3's activity; h5's key has
///   the wrong secret. (Agents are configured once, in `prepare`: a restart costs seconds.)
/// - ``SubnetsThroughReflectorOnHostsTests``: the router runs Avahi's reflector: h1 and h2 pair
///   by name, and listing, continuing, a continuation stream and `watch` work across it.
final class SubnetsOnHostsTests: LabTestCase {
    override class var hostCount: Int { 5 }
    override class var topology: LabTopology { .twoSubnets(.unicast) }

    static let domain = "handoff.test."
    static let keyName = "handoff-key"
    static let secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTMyYg=="
    static let type = "com.example.notes.edit"
    /// What h1 publishes for h2's handler in the static-peers test (the notes app takes its own type).
    static let staticType = "com.example.subnets.edit"

    static let wrongSecret = Data("not the secret of handoff-key".utf8).base64EncodedString()

    override class func prepare(_ lab: LabDriver) throws {
        try lab.lab("dns", "start", domain, keyName, secret)
        for host in ["h1", "h2"] { try lab.startAgent(host, config: ["urlOpener": ["true"], "handlers": [["activityTypes": [staticType], "command": ["true"]]]]) }
        for host in ["h3", "h4"] { try lab.startAgent(host, config: wideAreaConfig()) }
        try lab.startAgent("h5", config: wideAreaConfig(secret: wrongSecret))
        try lab.pair("h3", "h4")
    }

    /// An agent's config with wide-area DNS-SD in `handoff.test.` on the router's BIND.
    static func wideAreaConfig(secret: String = secret) -> [String: Any] {
        ["urlOpener": ["true"], "handlers": [["activityTypes": [type], "command": ["true"]]],
         "wideArea": ["domain": domain, "server": "198.18.2.254:53", "tsigKeyName": keyName, "tsigAlgorithm": "hmac-sha256", "tsigSecret": secret]]
    }

    /// What the router's BIND answers for `name`/`type`, asked from h2.
    func dig(_ name: String, _ type: String) throws -> [String] {
        try lab.exec("h2", ["dig", "+short", "@198.18.2.254", name, type]).stdout.split(separator: "\n").map(String.init)
    }

    func instanceName(_ host: String) throws -> String {
        return try XCTUnwrap(try lab.registeredStatus(host)["registeredName"] as? String)
    }

    func testWideAreaRegistrationBrowsingAndContinueThroughBIND() throws {
        let instance = try instanceName("h3")
        let service = "\(instance)._handoff._tcp.\(Self.domain)"
        try lab.waitUntil("h3's PTR in BIND", timeout: 5) { try dig("_handoff._tcp.\(Self.domain)", "PTR").contains(service) }
        XCTAssertEqual(try dig(service, "SRV").first?.hasSuffix(" \(try peerPort("h3")) \(instance).\(Self.domain)"), true)
        XCTAssertEqual(try dig("\(instance).\(Self.domain)", "A"), ["198.18.1.3"], "the address h3 reaches the server from")

        let id = try lab.publish("h3", "--type", Self.type, "--title", "Over unicast DNS")
        let elapsed = try lab.waitUntilListed(id, on: "h4", timeout: 5)
        print("wide-area: h3's activity listed on h4 after \(Int(elapsed * 1000)) ms (browse every 1 s)")
        XCTAssertFalse(try dig(service, "TXT").joined().isEmpty, "the sealed TXT is in BIND")
        let (status, response) = try lab.continueActivity(id, on: "h4")
        XCTAssertEqual(status, 0, "\(response)")

        try lab.stopAgent("h3")
        XCTAssertFalse(try dig("_handoff._tcp.\(Self.domain)", "PTR").contains(service), "h3's stop removed its PTR")
        XCTAssertEqual(try dig(service, "SRV"), [], "and its SRV")
        XCTAssertEqual(try dig("\(instance).\(Self.domain)", "A"), [], "and its A record")
        let gone = try lab.waitUntil("h3's activity gone from h4", timeout: 5) { try lab.offered(on: "h4").isEmpty }
        print("wide-area: h3's activity gone from h4 \(Int(gone * 1000)) ms after the stop")
    }

    func testWrongTSIGSecretIsRefusedAndTheAgentGoesOnWithMDNS() throws {
        let log = "\(try lab.path("h5"))/handoffd.log"
        try lab.waitUntil("h5 logs the refusal", timeout: 5) {
            lab.logLines(log).contains { $0.contains("refused the registration") && $0.contains("BADSIG") }
        }
        print("wide-area, wrong secret: \(lab.logLines(log).first { $0.contains("BADSIG") } ?? "")")
        XCTAssertEqual(try lab.handoff("h5", "status").status, 0, "h5's agent still runs")
        // Still on mDNS: h1, on h5's link, resolves h5's service at h5's address.
        try lab.waitUntil("h5's service over mDNS on h1", timeout: 5) {
            try lab.exec("h1", ["avahi-browse", "--terminate", "--resolve", "--parsable", "_handoff._tcp"]).stdout.contains(";198.18.1.5;")
        }
        XCTAssertFalse(try dig("_handoff._tcp.\(Self.domain)", "PTR").contains("\(try instanceName("h5"))._handoff._tcp.\(Self.domain)"))
    }

    func testDNSSDShowsNothingAcrossAndPairingByAddressWorks() throws {
        let accept = try startPair(on: "h1", ["--accept"])
        // h3, on h1's link, sees h1 accepting: the advertisement is out. h2 sees nothing of it.
        try lab.waitUntil("h3 sees h1 accepting pairing", timeout: 5) {
            try lab.handoff("h3", "pair", "--list").stdout.contains("h1")
        }
        XCTAssertFalse(try lab.handoff("h2", "pair", "--list").stdout.contains("h1"), "no multicast crosses the router")
        // h2's avahi-daemon resolves the services of its own link (h2's, h4's), none on 198.18.1.0/24.
        let browse = try lab.exec("h2", ["avahi-browse", "--terminate", "--resolve", "--parsable", "_handoff._tcp"])
        let resolved = browse.stdout.split(separator: "\n").filter { $0.hasPrefix("=") }
        XCTAssertFalse(resolved.isEmpty, browse.stdout)
        XCTAssertTrue(resolved.allSatisfy { $0.contains(";198.18.2.") }, browse.stdout)
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

        // Static peers across the router: h2 reaches h1 at that address, and h1's activity is
        // listed, watched and continued on h2 with no DNS-SD between them.
        let watch = try startWatch("static-across")
        let id = try lab.publish("h1", "--type", Self.staticType, "--title", "Across the router")
        let elapsed = try lab.waitUntilListed(id, on: "h2", timeout: 2)
        print("static peers across a unicast-only router: h1's activity listed on h2 after \(Int(elapsed * 1000)) ms")
        let peers = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "peers", "--json").stdout.utf8)) as? [[String: Any]]
        XCTAssertEqual(peers?.first { $0["name"] as? String == "h1" }?["via"] as? String, "address", "\(peers ?? [])")
        try waitForEvent(watch.log, "activityOffered") { $0["id"] as? String == id }
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        try waitForEvent(watch.log, "continued") { $0["id"] as? String == id }
        // And a continuation stream between the notes apps, SHA-256 exact.
        let apps = try continueAttachment(bytes: 1 << 20, label: "across")
        try assertAttachmentWhole(apps, bytes: 1 << 20, timeout: 10)
    }
}

final class SubnetsThroughReflectorOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }
    override class var topology: LabTopology { .twoSubnets(.reflector) }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2"] { try lab.startAgent(host, config: ["urlOpener": ["true"]]) }
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
        let watch = try startWatch("watch").log

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

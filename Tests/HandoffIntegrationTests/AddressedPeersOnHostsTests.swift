import Foundation
import XCTest

/// Static peers (issue 18, item 3) on two simulated hosts whose multicast DNS cannot reach each
/// other: h2's nftables drops mDNS (5353/udp) before either agent starts, so DNS-SD never shows h1
/// on h2. h2 knows h1 by its address (`trust add --address`); its agent reaches h1 there, learns
/// h1's activities over the kept connection, and `list`, `continue` and `watch` work as over DNS-SD.
/// (The ruleset is h2's network namespace's own: the machine's is never touched.)
class AddressedPeersOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }
    /// Where h2 is told h1 is, without its port.
    class var h1Address: String { "198.18.0.1" }
    static let type = "com.example.static.edit"  // not the notes example's: its continuations go to the app

    override class func prepare(_ lab: LabDriver) throws {
        for command in ["add table inet statictest",
                        "add chain inet statictest input { type filter hook input priority 0; policy accept; }",
                        "add rule inet statictest input udp dport 5353 drop"] {
            let result = try lab.exec("h2", ["nft", command])
            guard result.status == 0 else { throw LabError("nft \(command) on h2: \(result.stderr)") }
        }
        let config: [String: Any] = ["urlOpener": ["true"], "handlers": [["activityTypes": [type], "command": ["true"]]]]
        for host in ["h1", "h2"] { try lab.startAgent(host, config: config) }
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h1", "status", "--json").stdout.utf8)) as? [String: Any]
        guard let port = status?["port"] as? Int else { throw LabError("no port in h1's status") }
        let address = h1Address.contains(":") ? "[\(h1Address)]:\(port)" : "\(h1Address):\(port)"
        // Paired with the address given at once (h2 first): h1, which sees h2 over DNS-SD, then
        // reaches a device that already knows it by that address. (Given later, h2 would keep h1
        // where h1 first connected from, its ULA on the IPv6 lab, and doctor would say so.)
        let added = try lab.handoff("h2", "trust", "add", try lab.deviceID("h1"), "--name", "h1", "--address", address)
        guard added.status == 0 else { throw LabError("trust add --address on h2: \(added.stderr)") }
        let trusted = try lab.handoff("h1", "trust", "add", try lab.deviceID("h2"), "--name", "h2")
        guard trusted.status == 0 else { throw LabError("trust add on h1: \(trusted.stderr)") }
    }

    func peers(on host: String) throws -> [[String: Any]] {
        let output = try lab.handoff(host, "peers", "--json").stdout
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]], output)
    }

    func testListContinueAndWatchWithoutDNSSD() throws {
        let watch = try lab.startLogged("h2", [lab.handoffCLI, "watch", "--json"], log: "static-watch")
        defer { _ = try? lab.exec("h2", ["kill", "\(watch.pid)"]) }
        let id = try lab.publish("h1", "--type", Self.type, "--title", "Shopping list", "--user-info", #"{"text": "milk"}"#)
        let took = try lab.waitUntilListed(id, on: "h2", timeout: 2)
        print("static peers: h1's activity listed on h2 \(String(format: "%.0f", took * 1000)) ms after publishing, over the kept connection")
        let peers = try peers(on: "h2")
        XCTAssertEqual(peers.map { $0["via"] as? String }, ["address"], "\(peers)")
        XCTAssertEqual(peers.first?["name"] as? String, "h1")
        XCTAssertEqual(peers.first?["addresses"] as? [String], [Self.h1Address], "reached at its stored address: \(peers)")
        // mDNS is dropped: h2's avahi-daemon has no record of h1's service.
        let browse = try lab.exec("h2", ["avahi-browse", "-rtp", "_handoff._tcp"])
        XCTAssertFalse(browse.stdout.contains("h1.local"), "h2's avahi-daemon resolved h1's service: \(browse.stdout)")

        try waitForEvent(watch.log, "activityOffered") { $0["id"] as? String == id }
        let (status, json) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(json)")
        XCTAssertEqual(json["peer"] as? String, "h1")
        try waitForEvent(watch.log, "continued") { $0["id"] as? String == id }

        // doctor on h2: not seen over DNS-SD, but reached at its stored address (a warning, not a failure).
        let doctor = try lab.handoff("h2", "doctor", "--json")
        let findings = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [[String: String]], doctor.stdout)
        let dnsSD = findings.first { $0["check"] == "peer h1: dns-sd" }
        XCTAssertEqual(dnsSD?["status"], "warn", "\(findings)")
        XCTAssertTrue(dnsSD?["detail"]?.contains("stored address \(Self.h1Address)") == true, "\(dnsSD ?? [:])")
        XCTAssertEqual(findings.first { $0["check"] == "peer h1: reachable" }?["status"], "ok", "\(findings)")

        // A new activity on h1 is pushed at once; the old one is withdrawn.
        let next = try lab.publish("h1", "--type", Self.type, "--title", "Packing list")
        try lab.waitUntilListed(next, on: "h2", timeout: 2)
        try waitForEvent(watch.log, "activityWithdrawn") { $0["id"] as? String == id }
    }

    func testContinuationStreamsBetweenAppsWithoutDNSSD() throws {
        let apps = try continueAttachment(bytes: 1 << 20, label: "static")
        try assertAttachmentWhole(apps, bytes: 1 << 20, timeout: 10)
    }

    func testStoppedPeerIsUnreachableAndComesBack() throws {
        let id = try lab.publish("h1", "--type", Self.type, "--title", "Notes")
        try lab.waitUntilListed(id, on: "h2", timeout: 2)
        try lab.killAgent("h1")
        try lab.waitUntil("h1 unreachable on h2", timeout: 6) {
            try peers(on: "h2").first?["reachable"] as? Bool == false
        }
        XCTAssertTrue(try lab.offered(on: "h2").isEmpty)
        // h1 comes back at the same address (its port: the fixed one it had is kept in its config).
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "trust", "list", "--json").stdout.utf8)) as? [[String: Any]]
        let address = try XCTUnwrap((status?.first?["addresses"] as? [String])?.first)
        let port = try XCTUnwrap(Int(address.split(separator: ":").last ?? ""))  // HOST:PORT or [V6]:PORT
        let config: [String: Any] = ["urlOpener": ["true"], "port": port,
                                     "handlers": [["activityTypes": [Self.type], "command": ["true"]]]]
        try lab.startAgent("h1", config: config)
        let again = try lab.publish("h1", "--type", Self.type, "--title", "Notes again")
        try lab.waitUntilListed(again, on: "h2", timeout: 5)
        XCTAssertEqual(try peers(on: "h2").first?["reachable"] as? Bool, true)
    }
}

/// The same on an IPv6-only link, h1 stored at its link-local address with its scope
/// (`[fe80::1%eth0]:PORT`): issue 18's "static addresses accept [v6]:port".
final class AddressedPeersOnIPv6HostsTests: AddressedPeersOnHostsTests {
    override class var ipv6Only: Bool { true }
    override class var h1Address: String { "fe80::1%eth0" }

    // XCTest's discovery on Linux lists the methods a class declares, not the ones it inherits.
    override func testListContinueAndWatchWithoutDNSSD() throws { try super.testListContinueAndWatchWithoutDNSSD() }
    override func testContinuationStreamsBetweenAppsWithoutDNSSD() throws { try super.testContinuationStreamsBetweenAppsWithoutDNSSD() }
    override func testStoppedPeerIsUnreachableAndComesBack() throws { try super.testStoppedPeerIsUnreachableAndComesBack() }
}

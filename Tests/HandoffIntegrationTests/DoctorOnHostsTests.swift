import Foundation
import XCTest

/// `handoff doctor` on two simulated hosts, paired: every check is ok on a healthy pair, and each
/// check fails when its cause is made real inside a host's namespaces: avahi-daemon stopped,
/// mDNS dropped by nftables, the agent's port dropped by nftables, a paired device's link down,
/// a paired device that unpaired this host.
/// (nftables rulesets and links are per network namespace: the machine's own are never touched.)
final class DoctorOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2"] { try lab.startAgent(host, config: ["urlOpener": ["true"]]) }
        try lab.pair("h1", "h2")
    }

    /// `handoff doctor --json` on a host: its exit status and findings.
    func doctor(_ host: String) throws -> (status: Int32, findings: [[String: String]]) {
        let result = try lab.handoff(host, "doctor", "--json")
        let findings = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: String]]
        return (result.status, try XCTUnwrap(findings, "doctor --json on \(host): \(result.stdout) \(result.stderr)"))
    }

    func finding(_ findings: [[String: String]], _ check: String) -> [String: String]? {
        findings.first { $0["check"] == check }
    }

    /// Both hosts' doctors find nothing failing (each test starts from a healthy pair).
    func waitUntilHealthy(timeout: TimeInterval = 20) throws {
        do {
            try lab.waitUntil("doctor ok on h1 and h2", timeout: timeout) {
                try doctor("h1").status == 0 && doctor("h2").status == 0
            }
        } catch {
            let failing = try ["h1", "h2"].map { host in "\(host): \(try doctor(host).findings.filter { $0["status"] == "fail" })" }
            XCTFail("still failing: \(failing.joined(separator: "; "))")
            throw error
        }
    }

    func agentPort(_ host: String) throws -> Int {
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "status", "--json").stdout.utf8)) as? [String: Any]
        return try XCTUnwrap(status?["port"] as? Int)
    }

    /// A table of the test's own in the host's namespace, with `rule` in its input chain.
    func dropOnInput(_ host: String, _ rule: String) throws {
        try nft(host, "add table inet doctortest")
        try nft(host, "add chain inet doctortest input { type filter hook input priority 0; policy accept; }")
        try nft(host, "add rule inet doctortest input \(rule)")
    }

    func removeTestTable(_ host: String) throws {
        _ = try lab.exec(host, ["nft", "delete table inet doctortest"])
    }

    func testAllOkOnAHealthyPair() throws {
        try waitUntilHealthy()
        for host in ["h1", "h2"] {
            let (status, findings) = try doctor(host)
            XCTAssertEqual(status, 0)
            XCTAssertTrue(findings.allSatisfy { $0["status"] == "ok" }, "\(host): \(findings)")
            let peer = host == "h1" ? "h2" : "h1"
            for check in ["agent", "avahi", "own-service", "interfaces", "firewall", "resolved",
                          "peer \(peer): dns-sd", "peer \(peer): reachable", "peer \(peer): tls", "peer \(peer): clock"] {
                XCTAssertNotNil(finding(findings, check), "\(host) has no \(check) check: \(findings)")
            }
        }
        let text = try lab.handoff("h1", "doctor")
        print("doctor: h1 on a healthy pair:\n\(text.stdout)")
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdout.contains("ok   avahi: avahi-daemon is on the system bus and running"), text.stdout)
    }

    func testAvahiDaemonStoppedFailsAvahiAndOwnService() throws {
        try waitUntilHealthy()
        try lab.lab("avahi", "stop", "h1")
        defer { _ = try? lab.lab("avahi", "start", "h1") }
        let (status, findings) = try doctor("h1")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(finding(findings, "avahi")?["status"], "fail", "\(findings)")
        XCTAssertTrue(finding(findings, "avahi")?["detail"]?.contains("not on the system bus") == true, "\(findings)")
        XCTAssertEqual(finding(findings, "own-service")?["status"], "fail", "\(findings)")
        XCTAssertFalse(finding(findings, "avahi")?["fix"]?.isEmpty ?? true)
        try lab.lab("avahi", "start", "h1")
        try waitUntilHealthy()
    }

    func testMulticastDroppedByNftablesFailsTheFirewallCheck() throws {
        try waitUntilHealthy()
        try dropOnInput("h1", "udp dport 5353 drop")
        defer { try? removeTestTable("h1") }
        let (status, findings) = try doctor("h1")
        XCTAssertEqual(status, 1)
        let firewall = findings.filter { $0["check"] == "firewall" }
        XCTAssertEqual(firewall.count, 1, "\(findings)")
        XCTAssertEqual(firewall.first?["status"], "fail")
        XCTAssertTrue(firewall.first?["detail"]?.contains("nftables: drops mDNS (5353/udp): udp dport 5353 drop") == true, "\(firewall)")
        try removeTestTable("h1")
        try waitUntilHealthy()
    }

    func testAgentPortDroppedFailsTheFirewallCheckAndThePeersReachability() throws {
        try waitUntilHealthy()
        let port = try agentPort("h1")
        try dropOnInput("h1", "tcp dport \(port) drop")
        defer { try? removeTestTable("h1") }
        let (status, findings) = try doctor("h1")
        XCTAssertEqual(status, 1)
        let firewall = try XCTUnwrap(finding(findings, "firewall"), "\(findings)")
        XCTAssertEqual(firewall["status"], "fail")
        XCTAssertTrue(firewall["detail"]?.contains("the agent's port (\(port)/tcp): tcp dport \(port) drop") == true, "\(firewall)")
        // h2 cannot reach h1 through it.
        let (h2Status, h2Findings) = try doctor("h2")
        XCTAssertEqual(h2Status, 1)
        XCTAssertEqual(finding(h2Findings, "peer h1: dns-sd")?["status"], "ok", "\(h2Findings)")
        XCTAssertEqual(finding(h2Findings, "peer h1: reachable")?["status"], "fail", "\(h2Findings)")
        try removeTestTable("h1")
        try waitUntilHealthy()
    }

    func testPairedDeviceLinkDownFailsItsReachability() throws {
        try waitUntilHealthy()
        try lab.exec("h1", ["ip", "link", "set", "eth0", "down"])
        defer { try? linkUp() }
        let (status, findings) = try doctor("h2")
        XCTAssertEqual(status, 1)
        let reachable = try XCTUnwrap(finding(findings, "peer h1: reachable"), "\(findings)")
        XCTAssertEqual(reachable["status"], "fail")
        print("doctor: h2 on h1 with its link down: \(reachable)")
        // h1 itself has no interface left for multicast.
        let (h1Status, h1Findings) = try doctor("h1")
        XCTAssertEqual(h1Status, 1)
        XCTAssertEqual(finding(h1Findings, "interfaces")?["status"], "fail", "\(h1Findings)")
        try linkUp()
        try waitUntilHealthy()
    }

    /// h2 unpairs h1: h1's doctor fails h2's checks at once. While h1 still holds h2's last
    /// record, the pinned connection opens and h2 refuses the ping (the `tls` check fails); once
    /// h2's record is sealed under its new key, h1 no longer sees h2 over DNS-SD (the `dns-sd` check).
    func testUnpairedByThePeerFailsItsChecks() throws {
        try waitUntilHealthy()
        let h1ID = try lab.deviceID("h1")
        XCTAssertEqual(try lab.handoff("h2", "trust", "remove", h1ID).status, 0)
        defer { try? repair() }
        let (status, findings) = try doctor("h1")
        XCTAssertEqual(status, 1)
        let failing = findings.filter { $0["check"]?.hasPrefix("peer h2: ") == true && $0["status"] == "fail" }
        XCTAssertFalse(failing.isEmpty, "\(findings)")
        if let tls = finding(findings, "peer h2: tls"), finding(findings, "peer h2: reachable")?["status"] == "ok" {
            XCTAssertEqual(tls["status"], "fail", "\(findings)")
        }
        print("doctor: h1 on h2, which unpaired it: \(failing)")
        try repair()
        try waitUntilHealthy(timeout: 30)
    }

    /// Pairs h1 and h2 again, and restarts h1's agent so that it asks h2 for its new advertising key at once.
    func repair() throws {
        try lab.pair("h1", "h2")
        try lab.startAgent("h1", config: ["urlOpener": ["true"]])
    }

    /// Brings h1's eth0 up again with the multicast route `scripts/lab up` gave it (link down drops it).
    func linkUp() throws {
        try lab.exec("h1", ["ip", "link", "set", "eth0", "up"])
        try lab.exec("h1", ["ip", "route", "replace", "224.0.0.0/4", "dev", "eth0"])
    }
}

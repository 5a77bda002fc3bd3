import Foundation
import XCTest

/// Bounded resources against a hostile peer (scripts/lab-hostile-peer.py): h2's identity used by
/// an attacker (a paired device gone bad) and h3 (a stranger) attack h1's agent, whose resident
/// memory is sampled throughout. The figures are in docs/RELIABILITY.md, "Bounded resources".
extension TrustOnHostsTests {
    /// What one attacker printed, and h1's agent's RSS before, at its peak during, and after.
    struct Attack {
        var reports: [[String: Any]]
        var before: Int
        var peak: Int
        var after: Int
        var description: String {
            let mb = { (kib: Int) in String(format: "%.1f MB", Double(kib) / 1024) }
            return "RSS \(mb(before)), peak \(mb(peak)), after \(mb(after)); \(reports)"
        }
    }

    /// The resident set of a host's agent, in KiB.
    func agentRSS(_ host: String) throws -> Int { try lab.agentRSS(host) }

    /// The hostile-peer arguments that make it a host's device (its certificate and key).
    func identityArguments(of host: String) throws -> [String] {
        let state = "\(try lab.path(host))/state"
        return ["--cert", "\(state)/identity-cert.pem", "--key", "\(state)/identity-key.pem"]
    }

    /// Runs hostile peers (host, arguments) at once against h1, sampling h1's agent's RSS every
    /// 50 ms until each has printed its report.
    func attackH1(_ attackers: [(host: String, arguments: [String])], timeout: TimeInterval = 60) throws -> Attack {
        let port = try peerPort("h1")
        let script = lab.packageRoot.appendingPathComponent("scripts/lab-hostile-peer.py").path
        let before = try agentRSS("h1")
        var logs: [String] = []
        for (index, attacker) in attackers.enumerated() {
            let log = "\(try lab.path(attacker.host))/hostile-\(index)-\(UUID().uuidString.prefix(6)).log"
            _ = try lab.startBackground(attacker.host, ["python3", script] + attacker.arguments + ["--host", "198.18.0.1", "--port", "\(port)"], log: log)
            logs.append(log)
        }
        var peak = before
        func reports() -> [[String: Any]] {
            logs.compactMap { log in
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                return text.split(separator: "\n").last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            }
        }
        let start = Date()
        while reports().count < logs.count {
            peak = max(peak, try agentRSS("h1"))
            guard Date().timeIntervalSince(start) < timeout else {
                let output = logs.map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }
                throw LabError("the hostile peers did not finish within \(Int(timeout)) s: \(output)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let attack = Attack(reports: reports(), before: before, peak: max(peak, try agentRSS("h1")), after: try agentRSS("h1"))
        print("hostile peers \(attackers.map(\.arguments.first!)): \(attack.description)")
        return attack
    }

    /// Continues a fresh activity of h1's on h2: the agent still serves its paired peer.
    func assertH1StillServesH2(file: StaticString = #filePath, line: UInt = #line) throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "After the attack", "--webpage-url", "https://example.com/a")
        defer { _ = try? lab.handoff("h1", "resign", id) }
        try lab.waitUntilListed(id, on: "h2")
        let continued = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(continued.status, 0, "h2 continues h1's activity after the attack: \(continued.json)", file: file, line: line)
    }

    /// A frame header that declares 1 GiB, from a paired device and from a stranger, 50 times
    /// each with the body pushed behind it: every connection is closed at the header, and the
    /// agent's memory does not move.
    func testDeclaredGigabyteFrameIsRefusedAtItsHeaderAndMemoryStaysFlat() throws {
        let attack = try attackH1([
            ("h2", ["declare", "--connections", "50", "--size", "\(1 << 30)"] + identityArguments(of: "h2")),
            ("h3", ["declare", "--connections", "50", "--size", "\(1 << 30)"] + identityArguments(of: "h3")),
        ])
        for report in attack.reports {
            XCTAssertEqual(report["closed_by_agent"] as? Int, 50, "every connection is closed: \(report)")
            XCTAssertLessThan(report["max_seconds_to_close"] as? Double ?? 99, 1.0, "closed at the header, not after a timeout: \(report)")
            XCTAssertLessThan(report["max_body_bytes_pushed"] as? Int ?? .max, 4 << 20, "at most the sockets' buffers of body went out: \(report)")
        }
        XCTAssertLessThan(attack.peak - attack.before, 8 * 1024, "h1's RSS stays flat while 100 GiB are declared: \(attack.description)")
        XCTAssertLessThan(attack.after - attack.before, 4 * 1024, "and afterwards: \(attack.description)")
        try assertH1StillServesH2()
    }

    /// Slowloris, three rounds: h2's identity holds 40 connections, each with a 64 KiB frame
    /// all but sent and trickling a byte each half second, against a per-device cap of 32; h3, a
    /// stranger, opens 300 connections trickling a TLS ClientHello. The cap holds, the stranger's
    /// connections are all gone within the 1 s handshake deadline, the agent's memory is bounded
    /// by the cap, and repeating the attack does not grow it.
    func testSlowlorisSendersAreCappedAndMemoryStaysBounded() throws {
        let cap = 32
        try lab.startAgent("h1", config: ["urlOpener": ["true"], "security": ["maxConnectionsPerDevice": cap]])
        defer { try? lab.startAgent("h1", config: ["urlOpener": ["true"]]) }
        try lab.waitUntil("h2 to reach the restarted h1", timeout: 10) {
            try lab.handoff("h2", "peers").stdout.contains("h1  ") && !(try lab.handoff("h2", "peers").stdout.contains("unreachable"))
        }
        var attacks: [Attack] = []
        for _ in 0..<3 {
            let attack = try attackH1([
                ("h2", ["slowloris", "--connections", "40", "--seconds", "6"] + identityArguments(of: "h2")),
                ("h3", ["slowloris", "--connections", "300", "--seconds", "6"]),
            ])
            let paired = try XCTUnwrap(attack.reports.first { $0["tls"] as? Bool == true })
            let stranger = try XCTUnwrap(attack.reports.first { $0["tls"] as? Bool == false })
            let held = paired["open_at_end"] as? Int ?? -1
            // Never more than the cap; h2's own agent may hold its liveness connection (at times one
            // more) within it, unless the attacker took every place first.
            XCTAssertTrue((cap - 3...cap).contains(held), "the paired attacker holds what the cap leaves it: \(paired)")
            XCTAssertEqual(stranger["open_after_2s"] as? Int, 0, "no stranger's connection outlives the handshake deadline: \(stranger)")
            attacks.append(attack)
        }
        let baseline = attacks[0].before
        for attack in attacks {
            XCTAssertLessThan(attack.peak - baseline, 24 * 1024, "bounded by the cap: \(attack.description)")
        }
        XCTAssertLessThan(attacks[2].after - attacks[0].after, 6 * 1024,
                          "repeating the attack does not grow the agent: \(attacks.map(\.description))")
        let log = try String(contentsOfFile: "\(try lab.path("h1"))/handoffd.log", encoding: .utf8)
        XCTAssertTrue(log.contains("security.maxConnectionsPerDevice"), "the refusal is logged, naming the key")
        try assertH1StillServesH2()
    }
}

import Foundation
import XCTest

/// A change of route on two simulated hosts, paired, with real avahi-daemons (issue 21): h1 gains
/// a second address, Avahi announces it, and h2's DNS-SD resolves h1 at a new set of addresses.
/// h2's working liveness connection stays (docs/PROTOCOL.md, "Liveness": a change of route keeps
/// a working connection): the same TCP connection before and after, h1 reachable all along, and a
/// continue goes on it.
final class RouteChangeOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2"] { try lab.startAgent(host, config: ["urlOpener": ["true"]]) }
        try lab.pair("h1", "h2")
    }

    /// h1 as `handoff peers --json` on h2 shows it: nil when h2 does not list it.
    func h1() throws -> [String: Any]? {
        let peers = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "peers", "--json").stdout.utf8)) as? [[String: Any]]
        return peers?.first { $0["name"] as? String == "h1" }
    }

    func h1Reachable() throws -> Bool { try h1()?["reachable"] as? Bool == true }

    func testNewAddressKeepsTheLivenessConnection() throws {
        try lab.waitUntil("h1 reachable on h2", timeout: 10) { try h1Reachable() }
        let port = try XCTUnwrap(try h1()?["port"] as? Int)
        try lab.waitUntil("h2's liveness connection to h1 up", timeout: 5) { try lab.connectionsBetweenH2AndH1(h1Port: port).count == 1 }
        let before = try lab.connectionsBetweenH2AndH1(h1Port: port)
        let address = try lab.address("h1")
        let second = address.split(separator: ".").dropLast().joined(separator: ".") + ".101"
        try lab.exec("h1", ["ip", "addr", "add", "\(second)/24", "dev", "eth0"])
        defer { _ = try? lab.exec("h1", ["ip", "addr", "del", "\(second)/24", "dev", "eth0"]) }
        // A new record too, so that h2 resolves h1 afresh whatever Avahi's address announcement
        // does; a web page, which h2's urlOpener (`true`) takes when continued.
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "h1 has a second address",
                                 "--webpage-url", "https://example.com/moved")
        try lab.waitUntilListed(id, on: "h2")
        var flips = 0
        let moved: TimeInterval
        do {
            moved = try lab.waitUntil("h2 resolves h1 at its second address", timeout: 10) {
                if try !h1Reachable() { flips += 1 }
                return (try h1()?["addresses"] as? [String])?.contains(second) == true
            }
        } catch {
            XCTFail("h1 as h2 lists it: \(try h1() ?? [:])")
            throw error
        }
        for _ in 0..<20 {  // 2 s: a replaced connection would show by now (a ping is answered in ms)
            if try !h1Reachable() { flips += 1 }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let after = try lab.connectionsBetweenH2AndH1(h1Port: port)
        print("route change: h1 resolved at \(try h1()?["addresses"] ?? []) after \(String(format: "%.3f", moved)) s; h2's connections to h1 before \(before), after \(after)")
        XCTAssertEqual(after, before, "the same liveness connection, not a new one")
        XCTAssertEqual(flips, 0, "h1 shown unreachable \(flips) times while it answered")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(try lab.connectionsBetweenH2AndH1(h1Port: port), before, "the continue went on it too")
    }
}

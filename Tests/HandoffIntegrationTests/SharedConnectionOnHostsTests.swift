import Foundation
import XCTest

/// One connection per pair of devices, on two simulated hosts with real avahi-daemons, real TCP
/// and TLS (issue 21; docs/PROTOCOL.md, "One connection per pair"): both agents watch each other,
/// their dials cross at the start, and once settled exactly one TCP connection joins the two
/// agents. It carries both sides' liveness and continues both ways, with no new connection.
final class SharedConnectionOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2"] { try lab.startAgent(host, config: ["urlOpener": ["true"]]) }
        try lab.pair("h1", "h2")
    }

    /// `other` as `handoff peers --json` on `host` shows it: nil when not listed.
    func peer(_ other: String, on host: String) throws -> [String: Any]? {
        let peers = try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "peers", "--json").stdout.utf8)) as? [[String: Any]]
        return peers?.first { $0["name"] as? String == other }
    }

    /// The TCP connections established between the two agents, whichever side dialled.
    func connectionsBetween(ports: (h1: Int, h2: Int)) throws -> [String] {
        try lab.connectionsBetween("h1", ports: (own: ports.h1, peer: ports.h2))
    }

    func testOneConnectionCarriesBothDirections() throws {
        try lab.waitUntil("each lists the other reachable", timeout: 10) {
            try peer("h1", on: "h2")?["reachable"] as? Bool == true && peer("h2", on: "h1")?["reachable"] as? Bool == true
        }
        let ports = (h1: try XCTUnwrap(try peer("h1", on: "h2")?["port"] as? Int), h2: try XCTUnwrap(try peer("h2", on: "h1")?["port"] as? Int))
        let settled = try lab.waitUntil("one connection between the agents", timeout: 10) { try connectionsBetween(ports: ports).count == 1 }
        let before = try connectionsBetween(ports: ports)
        let fromH1 = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "from h1", "--webpage-url", "https://example.com/1")
        let fromH2 = try lab.publish("h2", "--type", "com.example.notes.edit", "--title", "from h2", "--webpage-url", "https://example.com/2")
        try lab.waitUntilListed(fromH1, on: "h2")
        try lab.waitUntilListed(fromH2, on: "h1")
        for _ in 0..<3 {
            let (h2Status, h2Response) = try lab.continueActivity(fromH1, on: "h2")
            XCTAssertEqual(h2Status, 0, "\(h2Response)")
            let (h1Status, h1Response) = try lab.continueActivity(fromH2, on: "h1")
            XCTAssertEqual(h1Status, 0, "\(h1Response)")
        }
        Thread.sleep(forTimeInterval: 2)  // pings both ways meanwhile
        let after = try connectionsBetween(ports: ports)
        print("shared connection: one after \(String(format: "%.3f", settled)) s: \(before); after continues both ways: \(after)")
        XCTAssertEqual(after, before, "the same one connection, both directions' liveness and continues on it")
        XCTAssertEqual(try peer("h1", on: "h2")?["reachable"] as? Bool, true)
        XCTAssertEqual(try peer("h2", on: "h1")?["reachable"] as? Bool, true)
    }
}

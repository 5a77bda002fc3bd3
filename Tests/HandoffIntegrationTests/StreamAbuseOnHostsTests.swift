import Foundation
import XCTest

/// A paired device gone bad against continuation streams (review finding 2), with h2's own
/// identity (scripts/lab-stream-abuser.py): on h1 an app publishes an activity with streams and
/// never accepts them; h2 opens two stream requests with the same stream ID, then hangs up.
final class StreamAbuseOnHostsTests: LabTestCase {
    override class func prepare(_ lab: LabDriver) throws {
        // A long fetchTimeout: a stream request that outlived its connection would wait 30 s.
        try lab.startAgent("h1", config: ["urlOpener": ["true"], "limits": ["fetchTimeout": 30]])
        try lab.startAgent("h2", config: ["urlOpener": ["true"]])
        try lab.pair("h1", "h2")
    }

    func status(_ host: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "status", "--json").stdout.utf8)) as? [String: Any])
    }

    func testAReusedStreamIDIsRefusedAndRequestsEndWithTheirConnection() throws {
        let script = lab.packageRoot.appendingPathComponent("scripts/lab-stream-abuser.py").path
        let h1 = try lab.path("h1")
        let appLog = "\(h1)/silent-app.json"
        _ = try lab.startBackground("h1", ["python3", script, "app", "--socket", "\(h1)/handoff.sock", "--seconds", "60"], log: appLog)
        try lab.waitUntil("the silent app to publish", timeout: 10) {
            ((try? String(contentsOfFile: appLog, encoding: .utf8)) ?? "").contains("activityID")
        }
        let published = try JSONSerialization.jsonObject(with: Data(try String(contentsOfFile: appLog, encoding: .utf8).utf8)) as? [String: Any]
        let activity = try XCTUnwrap(published?["activityID"] as? String, "\(published ?? [:])")
        let port = try XCTUnwrap(try status("h1")["port"] as? Int)
        let h2State = "\(try lab.path("h2"))/state"

        for round in 0..<3 {
            let started = Date()
            let result = try lab.exec("h2", ["python3", script, "open", "--host", "198.18.0.1", "--port", "\(port)",
                                             "--cert", "\(h2State)/identity-cert.pem", "--key", "\(h2State)/identity-key.pem",
                                             "--activity", activity, "--seconds", "1.5"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let seen = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let errors = seen?["errors"] as? [String] ?? []
            XCTAssertTrue(errors.contains { $0.contains("already being opened") }, "round \(round): the second request is refused at once: \(seen ?? [:])")
            // Both connections are gone: nothing of them stays in h1, long before fetchTimeout (30 s).
            try lab.waitUntil("h1 to drop the abandoned stream request", timeout: 3) { (try status("h1")["streamPairs"] as? Int) == 0 }
            XCTAssertLessThan(Date().timeIntervalSince(started), 10, "round \(round)")
        }
    }
}

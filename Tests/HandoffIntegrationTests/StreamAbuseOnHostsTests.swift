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

    var script: String { lab.packageRoot.appendingPathComponent("scripts/lab-stream-abuser.py").path }

    /// The silent app's activity on h1 (started once for the suite: a bundle ID is held by one
    /// connection at a time).
    nonisolated(unsafe) static var silentActivity: String?

    func activity() throws -> String {
        if let id = Self.silentActivity { return id }
        let h1 = try lab.path("h1")
        let appLog = "\(h1)/silent-app.json"
        _ = try lab.startBackground("h1", ["python3", script, "app", "--socket", "\(h1)/handoff.sock", "--seconds", "300"], log: appLog)
        try lab.waitUntil("the silent app to publish", timeout: 10) {
            ((try? String(contentsOfFile: appLog, encoding: .utf8)) ?? "").contains("activityID")
        }
        let published = try JSONSerialization.jsonObject(with: Data(try String(contentsOfFile: appLog, encoding: .utf8).utf8)) as? [String: Any]
        let id = try XCTUnwrap(published?["activityID"] as? String, "\(published ?? [:])")
        Self.silentActivity = id
        return id
    }

    func identity(of host: String) throws -> [String] {
        let state = "\(try lab.path(host))/state"
        return ["--cert", "\(state)/identity-cert.pem", "--key", "\(state)/identity-key.pem"]
    }

    func testAReusedStreamIDIsRefusedAndRequestsEndWithTheirConnection() throws {
        let activity = try activity()
        let port = try XCTUnwrap(try status("h1")["port"] as? Int)
        let h2State = "\(try lab.path("h2"))/state"

        for round in 0..<3 {
            let started = Date()
            let result = try lab.exec("h2", ["python3", script, "open", "--host", "198.18.0.1", "--port", "\(port)",
                                             "--cert", "\(h2State)/identity-cert.pem", "--key", "\(h2State)/identity-key.pem",
                                             "--activity", activity, "--seconds", "5"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let seen = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let errors = seen?["errors"] as? [String] ?? []
            XCTAssertTrue(errors.contains { $0.contains("already being opened") }, "round \(round): the second request is refused at once: \(seen ?? [:])")
            // Both connections are gone: nothing of them stays in h1, long before fetchTimeout (30 s).
            try lab.waitUntil("h1 to drop the abandoned stream request", timeout: 3) { (try status("h1")["streamPairs"] as? Int) == 0 }
            XCTAssertLessThan(Date().timeIntervalSince(started), 10, "round \(round)")
        }
    }

    /// The review's suspicion: while sessions wait (here for a stream's acceptance, up to
    /// fetchTimeout), a paired device pipelines full frames behind each request on 60
    /// connections. Each connection buffers at most 2 decoded frames for its session, then stops
    /// reading; the rest waits in the kernel's socket buffers, not in the agent.
    func testFramesPipelinedWhileSessionsWaitStayBounded() throws {
        let activity = try activity()
        let port = try XCTUnwrap(try status("h1")["port"] as? Int)
        let before = try lab.agentRSS("h1")
        let log = "\(try lab.path("h2"))/pipeline-\(UUID().uuidString.prefix(6)).json"
        _ = try lab.startBackground("h2", ["python3", script, "pipeline", "--host", "198.18.0.1", "--port", "\(port)"] + (try identity(of: "h2"))
                                    + ["--activity", activity, "--connections", "40", "--frames", "20", "--seconds", "4"], log: log)
        var peak = before
        let started = Date()
        while !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("connections"), Date().timeIntervalSince(started) < 30 {
            peak = max(peak, try lab.agentRSS("h1"))
            Thread.sleep(forTimeInterval: 0.05)
        }
        let report = try JSONSerialization.jsonObject(with: Data(try String(contentsOfFile: log, encoding: .utf8).utf8)) as? [String: Any]
        let connections = report?["connections"] as? Int ?? 0
        let pushed = (report?["pushedKiB"] as? [Int] ?? []).reduce(0, +)
        let grew = peak - before
        print("40 paired connections pipelining 64 KiB frames behind waiting stream requests: \(connections) accepted, \(pushed / 1024) MiB pushed, h1's agent RSS \(before / 1024) MB -> peak \(peak / 1024) MB (+\(grew / 1024) MB, \(connections > 0 ? grew / connections : 0) KiB a connection)")
        XCTAssertGreaterThanOrEqual(connections, 36, "\(report ?? [:])")
        // Measured: about 0.5 MB a connection (TLS, read buffers, 2 decoded frames, the frame being decoded).
        XCTAssertLessThan(grew, 32 * 1024, "h1's agent grew by \(grew / 1024) MB")
        try lab.waitUntil("h1 to drop the abandoned requests", timeout: 10) { (try status("h1")["streamPairs"] as? Int) == 0 }
    }
}

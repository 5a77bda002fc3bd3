import Foundation
import XCTest

/// Network and host faults on simulated hosts (docs/RELIABILITY.md, "Network and host faults"):
/// h1 is the source, h2 continues. Every test ends with the lab healthy again and shows the next
/// handoff succeeding.
/// - kill -9 of the source agent mid-transfer and mid-stream;
/// - h1's link down mid-transfer, and up again;
/// - delay, jitter, loss and reordering on both hosts' links (`scripts/lab impair`, netem-style);
/// - D-Bus stopped on h1 (avahi-daemon goes with it) and started again.
///
/// (An avahi-daemon restart is in HandoffIntegrationTests.testAgentSurvivesAvahiDaemonRestart.)
final class HostFaultsOnHostsTests: LabTestCase {
    static let fetchTimeout = 2.0
    static let type = "com.example.hostfaults"
    static var sourceConfig: [String: Any] { ["urlOpener": ["true"]] }

    override class var hostCount: Int { 2 }

    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1", config: sourceConfig)
        try lab.startAgent("h2", config: h2Config(limits: h2Limits))
        try lab.pair("h1", "h2")
    }

    static var h2Limits: [String: Any] { ["connectTimeout": 1.0, "fetchTimeout": fetchTimeout, "streamIdleTimeout": 2.0] }

    /// h2's configuration: its handler writes each delivery to a file in h2's directory.
    static func h2Config(limits: [String: Any]) throws -> [String: Any] {
        ["urlOpener": ["true"], "limits": limits,
         "handlers": [["activityTypes": [type], "command": ["sh", "-c", "cat > \"$0/delivered-$$.json\"", try lab.path("h2")]]]]
    }

    func h2Config(limits: [String: Any]) throws -> [String: Any] { try Self.h2Config(limits: limits) }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try waitUntilH1Reachable(timeout: 15)
    }

    override func tearDownWithError() throws {
        try super.tearDownWithError()
        guard Self.labIsReady else { return }
        // Whatever a failed test left behind: h1 whole again.
        _ = try? lab.lab("impair", "h1", "off")
        _ = try? lab.lab("impair", "h2", "off")
        _ = try? lab.lab("link", "up", "h1")
        _ = try? lab.exec("h1", [lab.handoffCLI, "fault", "clear"])
    }

    // MARK: Helpers

    func waitUntilH1Reachable(timeout: TimeInterval) throws {
        try lab.waitUntil("h1 reachable on h2", timeout: timeout) {
            let peers = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "peers", "--json").stdout.utf8)) as? [[String: Any]]
            return peers?.contains { $0["name"] as? String == "h1" && $0["reachable"] as? Bool == true } == true
        }
    }

    /// The handler's deliveries on h2, as their JSON texts.
    func deliveries() throws -> [String] {
        let dir = try lab.path("h2")
        return try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("delivered-") }.sorted()
            .map { try String(contentsOfFile: "\(dir)/\($0)", encoding: .utf8) }
    }

    func publishListed(_ title: String, userInfo: String = #"{"n": 1}"#, timeout: TimeInterval = 10) throws -> String {
        let id = try lab.publish("h1", "--type", Self.type, "--title", title, "--user-info", userInfo)
        try lab.waitUntilListed(id, on: "h2", timeout: timeout)
        return id
    }

    /// The next handoff: published on h1, continued on h2, delivered to the handler once.
    func assertNextHandoffSucceeds(_ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try deliveries().count
        let id = try publishListed("next after \(context)")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "the next handoff after \(context): \(response)", file: file, line: line)
        XCTAssertEqual(try deliveries().count, before + 1, "delivered once after \(context)", file: file, line: line)
        _ = try lab.handoff("h1", "resign", id)
    }

    /// Starts `handoff continue ID --json` on h2 in the background; returns its log.
    func continueInBackground(_ id: String, log name: String) throws -> String {
        try startLogged("h2", [lab.handoffCLI, "continue", id, "--json"], log: name)
    }

    /// Waits for a background `handoff continue` to print its answer; returns it.
    func answer(of log: String, timeout: TimeInterval) throws -> [String: Any] {
        var object: [String: Any]?
        try lab.waitUntil("the answer of handoff continue in \(log)", timeout: timeout) {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            return object != nil
        }
        return object!
    }

    /// How many lines h1's agent log has now: pass it to ``waitForAgentLog(_:after:timeout:)``.
    func agentLogMark() throws -> Int { lab.logLines("\(try lab.path("h1"))/handoffd.log").count }

    /// Waits until h1's agent log has a line containing `text` after the first `mark` lines (the
    /// log outlives agent restarts, so earlier tests' lines are in it too).
    func waitForAgentLog(_ text: String, after mark: Int, timeout: TimeInterval = 5) throws {
        let log = "\(try lab.path("h1"))/handoffd.log"
        try lab.waitUntil("\"\(text)\" in h1's agent log", timeout: timeout) { lab.logLines(log).dropFirst(mark).contains { $0.contains(text) } }
    }

    func restartH1() throws {
        try lab.startAgent("h1", config: Self.sourceConfig)
        let back = try lab.waitUntil("h1 reachable on h2 after its restart", timeout: 15) {
            let peers = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "peers", "--json").stdout.utf8)) as? [[String: Any]]
            return peers?.contains { $0["name"] as? String == "h1" && $0["reachable"] as? Bool == true } == true
        }
        print("host faults: h1's restarted agent reachable on h2 after \(String(format: "%.3f", back)) s")
    }

    // MARK: kill -9

    /// The source agent dies while it holds the payload back: the continuing side fails at once
    /// (not at its fetch timeout), nothing reaches the handler, and once the source agent is back
    /// the next handoff succeeds.
    func testKillNineOfTheSourceMidTransfer() throws {
        let id = try publishListed("killed mid-transfer")
        let before = try deliveries().count
        XCTAssertEqual(try lab.exec("h1", [lab.handoffCLI, "fault", "set", "payloadDelayMs=5000"]).status, 0)
        let mark = try agentLogMark()
        let log = try continueInBackground(id, log: "kill-mid-transfer")
        try waitForAgentLog("fault: delaying payload", after: mark)
        let killed = Date()
        try lab.killAgent("h1")
        let response = try answer(of: log, timeout: Self.fetchTimeout * 1.1 + 1)
        let elapsed = Date().timeIntervalSince(killed)
        print("host faults: kill -9 mid-transfer: \(response.errorCode ?? 0) after \(String(format: "%.3f", elapsed)) s: \(response)")
        XCTAssertTrue([4608, 4609].contains(response.errorCode ?? 0), "a broken transfer: \(response)")
        XCTAssertLessThan(elapsed, Self.fetchTimeout, "the connection's end is noticed, not waited out")
        XCTAssertEqual(try deliveries().count, before, "nothing delivered")
        XCTAssertEqual(try lab.handoff("h2", "status", "--json").status, 0, "h2's agent still serving")
        try restartH1()
        try assertNextHandoffSucceeds("kill -9 mid-transfer")
    }

    /// The source agent dies while a continuation stream carries an attachment: the continuing
    /// app's stream fails (it never reports a partial attachment as received), and a fresh stream
    /// after the restart arrives whole.
    func testKillNineOfTheSourceMidStream() throws {
        let (viewer, editor) = try continueAttachment(bytes: 1 << 30, label: "kill-stream")
        let editorPID = try XCTUnwrap(started.last)
        try lab.waitForLine(editor, "streams opened", timeout: 10)
        Thread.sleep(forTimeInterval: 0.3)  // bytes are flowing
        let killed = Date()
        try lab.killAgent("h1")
        try lab.waitUntil("the viewer's streams to end", timeout: 5) {
            lab.logLines(viewer).contains { $0.hasPrefix("streams failed") || $0.hasPrefix("received") }
        }
        let elapsed = Date().timeIntervalSince(killed)
        let outcome = lab.logLines(viewer).first { $0.hasPrefix("streams failed") || $0.hasPrefix("received") } ?? ""
        print("host faults: kill -9 mid-stream: the viewer after \(String(format: "%.3f", elapsed)) s: \(outcome)")
        XCTAssertTrue(outcome.hasPrefix("streams failed"), "a cut stream fails; it is not a short attachment: \(outcome)")
        XCTAssertEqual(try lab.handoff("h2", "status", "--json").status, 0, "h2's agent still serving")
        try restartH1()
        // The first editor outlives its agent and reconnects to the new one (HandoffKit): it
        // quits, so that the next editor may register com.example.notes.
        kill(editorPID, SIGTERM)
        try lab.waitUntil("the first editor gone from h1", timeout: 5) {
            let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h1", "status", "--json").stdout.utf8)) as? [String: Any]
            return (status?["apps"] as? [Any])?.isEmpty ?? false
        }
        // The next stream, whole.
        try assertAttachmentWhole(try continueAttachment(bytes: 1 << 20, label: "kill-stream-next"), bytes: 1 << 20, timeout: 10)
    }

    // MARK: Link down and up

    /// h1's link goes down while h1 holds the payload back: no RST crosses a dead link, so the
    /// continuation ends at whichever comes first, h2's fetch timeout (4610) or liveness finding
    /// h1 unreachable (4609, "h1 stopped answering": issue 18); here both are 2 s, so either may.
    /// LivenessOnHostsTests.testLinkDownMidContinuationFailsWith4609AtOnce takes a fetch timeout
    /// well past liveness's, where it must be 4609. h2 marks h1 unreachable, and when the link
    /// comes back h1 is reachable within 2 s and the next handoff succeeds.
    func testLinkDownMidTransferAndUpAgain() throws {
        let id = try publishListed("link down mid-transfer")
        let before = try deliveries().count
        XCTAssertEqual(try lab.exec("h1", [lab.handoffCLI, "fault", "set", "payloadDelayMs=1000"]).status, 0)
        let mark = try agentLogMark()
        let began = Date()
        let log = try continueInBackground(id, log: "link-down-mid-transfer")
        try waitForAgentLog("fault: delaying payload", after: mark)
        try lab.lab("link", "down", "h1")
        let response = try answer(of: log, timeout: 10)
        let elapsed = Date().timeIntervalSince(began)
        // Liveness: at most its timeout (2 s) and one interval (1 s) after the link went down.
        let bound = max(Self.fetchTimeout * 1.1, 2.0 + 1.0) + 0.5
        if elapsed > bound {
            for line in lab.logLines("\(try lab.path("h2"))/handoffd.log").suffix(30) { print("h2: \(line)") }
        }
        print("host faults: link down mid-transfer: \(response.errorCode ?? 0) after \(String(format: "%.3f", elapsed)) s")
        XCTAssertTrue([4609, 4610].contains(response.errorCode ?? 0), "\(response)")
        if response.errorCode == 4609 {
            XCTAssertTrue("\(response)".contains("h1 stopped answering"), "\(response)")
        }
        XCTAssertLessThanOrEqual(elapsed, bound, "within the fetch timeout + 10 %, or liveness's timeout + an interval (+ starting the CLI)")
        XCTAssertEqual(try deliveries().count, before, "nothing delivered")
        XCTAssertEqual(try lab.exec("h1", [lab.handoffCLI, "fault", "clear"]).status, 0)
        try lab.lab("link", "up", "h1")
        let back = try lab.waitUntil("h1 reachable again", timeout: 5) {
            let peers = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h2", "peers", "--json").stdout.utf8)) as? [[String: Any]]
            return peers?.contains { $0["name"] as? String == "h1" && $0["reachable"] as? Bool == true } == true
        }
        print("host faults: h1 reachable \(String(format: "%.3f", back)) s after its link came up")
        XCTAssertLessThanOrEqual(back, 2.0, "a peer that returns is back within 2 s")
        try assertNextHandoffSucceeds("the link coming back")
    }

    // MARK: Delay, jitter, loss, reordering

    /// Both links impaired (40 ± 20 ms delay, 3 % loss, 25 % reordered): activities still appear,
    /// every continuation of a 3 KB userInfo arrives identical, and a 4 MiB continuation stream
    /// arrives bit-exact. The forwarders' counts show the impairment was real.
    func testDelayLossAndReorderingOnBothLinks() throws {
        // h2 with limits for a lossy link. TCP retransmits a lost SYN after 1 s, then 3 s, and
        // a lost handshake segment after about 1 s, so connect and fetch timeouts of 1-2 s fail
        // a few continues in a hundred at 3 % loss; 10 s rides out two losses in a row. Liveness
        // gets 5 s for the same reason. (docs/RELIABILITY.md, "Limits on a lossy link".)
        var h2 = try h2Config(limits: ["connectTimeout": 10.0, "fetchTimeout": 10.0])
        h2["liveness"] = ["timeout": 5.0]
        try lab.startAgent("h2", config: h2)
        defer { _ = try? lab.startAgent("h2", config: h2Config(limits: Self.h2Limits)) }
        try waitUntilH1Reachable(timeout: 15)
        // A fixed seed: the forwarders' random draws drop the 9th frame each host sends (then
        // about 3 % of the rest), so "some frames were lost" holds however few frames the run
        // needs. With a new seed each run, a link that carried under 200 frames lost none about
        // once in 400 runs.
        for host in ["h1", "h2"] {
            XCTAssertEqual(try lab.lab("impair", host, "--delay", "40", "--jitter", "20", "--loss", "3", "--reorder", "25", "--seed", "11").status, 0)
        }

        let text = String(repeating: "impaired link ", count: 200)  // about 3 KB of userInfo
        var latencies: [Double] = []
        for run in 0..<5 {
            let before = try deliveries()
            let id = try publishListed("impaired \(run)", userInfo: #"{"text": "\#(text)", "run": \#(run)}"#, timeout: 20)
            let start = Date()
            let (status, response) = try lab.continueActivity(id, on: "h2")
            latencies.append(Date().timeIntervalSince(start))
            XCTAssertEqual(status, 0, "run \(run): \(response)")
            let after = try deliveries()
            XCTAssertEqual(after.count, before.count + 1, "run \(run): delivered once")
            let delivered = Set(after).subtracting(before).first ?? ""
            XCTAssertTrue(delivered.contains(text) && delivered.contains("\"run\":\(run)") || delivered.contains("\"run\" : \(run)"),
                          "run \(run): the userInfo arrived whole")
            _ = try lab.handoff("h1", "resign", id)
        }
        print("host faults: continues over impaired links took \(latencies.map { String(format: "%.3f", $0) }.joined(separator: ", ")) s")

        let apps = try continueAttachment(bytes: 4 << 20, label: "impaired", listTimeout: 20)
        let received = try assertAttachmentWhole(apps, bytes: 4 << 20, timeout: 60)
        print("host faults: 4 MiB stream over impaired links: \(received)")

        for host in ["h1", "h2"] {
            let off = try lab.lab("impair", host, "off")
            print("host faults: \(host)'s forwarder: \(off.stdout.split(separator: "\n").first ?? "")")
            let dropped = off.stdout.split(separator: " ").drop { $0 != "dropped" }.dropFirst().first.flatMap { Int($0) } ?? 0
            XCTAssertGreaterThan(dropped, 0, "\(host)'s link lost frames: \(off.stdout)")
        }
        try assertNextHandoffSucceeds("the impairment")
    }

    // MARK: D-Bus

    /// D-Bus stops on h1 and avahi-daemon goes with it: h1's agent keeps running and serving its
    /// control socket; when the bus and avahi-daemon are back, h1 advertises again on its own and
    /// the next handoff succeeds.
    func testDBusStopAndStartOnTheSource() throws {
        XCTAssertEqual(try lab.lab("dbus", "stop", "h1").status, 0)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(try lab.handoff("h1", "status", "--json").status, 0, "h1's agent still runs without D-Bus")
        let id = try lab.publish("h1", "--type", Self.type, "--title", "published while D-Bus was down")
        XCTAssertEqual(try lab.lab("dbus", "start", "h1").status, 0)
        let listed = try lab.waitUntilListed(id, on: "h2", timeout: 15)
        print("host faults: h1's activity listed on h2 \(String(format: "%.3f", listed)) s after D-Bus and avahi-daemon were back")
        let before = try deliveries().count
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").status, 0)
        XCTAssertEqual(try deliveries().count, before + 1)
        _ = try lab.handoff("h1", "resign", id)
        try assertNextHandoffSucceeds("D-Bus coming back")
    }
}

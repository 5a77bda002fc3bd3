import Foundation
import XCTest

/// Noticing and continuing (issue 17) on three simulated hosts, paired, with real avahi-daemons:
/// `handoff watch --json` on h2 sees h1's activity offered, continued, withdrawn and h1 gone;
/// `handoff continue` with no ID, with `--from` and with a prefix each take the right activity;
/// `handoff pause` on h1 withdraws its advertisement and outlasts a restart.
final class WatchOnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }
    static let type = "com.example.notes.edit"

    static func config(_ host: String) -> [String: Any] {
        ["urlOpener": ["true"], "handlers": [["activityTypes": [type], "command": ["true"]]]]
    }

    override class func prepare(_ lab: LabDriver) throws {
        for host in ["h1", "h2", "h3"] { try lab.startAgent(host, config: config(host)) }
        try lab.pair("h1", "h2", "h3")
    }

    func testWatchSeesOfferContinueWithdrawAndPeerGone() throws {
        let watch = try startWatch("watch-flow")
        defer { _ = try? lab.exec("h2", ["kill", "\(watch.pid)"]) }

        let id = try lab.publish("h1", "--type", Self.type, "--title", "Watched note")
        let (offered, seenAt) = try waitForEvent(watch.log, "activityOffered") { $0["id"] as? String == id }
        XCTAssertEqual(offered["peer"] as? String, "h1")
        XCTAssertEqual(offered["title"] as? String, "Watched note")
        XCTAssertEqual(offered["activityType"] as? String, Self.type)
        let time = try XCTUnwrap((offered["time"] as? String).flatMap { try? Date($0, strategy: .iso8601) }, "\(offered)")
        // The test polls the log every 50 ms: what it sees is the event's delay plus at most that.
        print("watch: activityOffered written \(String(format: "%.0f", seenAt.timeIntervalSince(time) * 1000)) ms after the agent's time stamp (poll 50 ms)")
        XCTAssertLessThan(seenAt.timeIntervalSince(time), 1.0)

        let (status, result) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(result)")
        let continued = try waitForEvent(watch.log, "continued") { $0["id"] as? String == id }.event
        XCTAssertEqual(continued["by"] as? String, "handler")
        XCTAssertEqual(continued["peer"] as? String, "h1")

        try lab.handoff("h1", "resign", id)
        let withdrawn = try waitForEvent(watch.log, "activityWithdrawn") { $0["id"] as? String == id }.event
        XCTAssertEqual(withdrawn["peer"] as? String, "h1")

        try lab.killAgent("h1")
        let gone = try waitForEvent(watch.log, "peerUnreachable", timeout: 6) { $0["peer"] as? String == "h1" }
        print("watch: peerUnreachable for h1 after kill -9 seen on h2")
        XCTAssertNotNil(gone.event["time"] as? String)
        let all = events(watch.log)
        XCTAssertEqual(all.filter { $0["id"] as? String == id }.compactMap { $0["event"] as? String },
                       ["activityOffered", "continued", "activityWithdrawn"], "\(all)")
        let withdrawnAt = all.firstIndex { $0["event"] as? String == "activityWithdrawn" && $0["id"] as? String == id }
        let goneAt = all.firstIndex { $0["event"] as? String == "peerUnreachable" && $0["peer"] as? String == "h1" }
        XCTAssertLessThan(try XCTUnwrap(withdrawnAt), try XCTUnwrap(goneAt))
        try lab.startAgent("h1", config: Self.config("h1"))
        try waitForEvent(watch.log, "peerReachable", timeout: 10) { $0["peer"] as? String == "h1" }
    }

    /// `handoff continue ARGS --json` on h2: the exit status, and the continued activity's ID.
    func continueOnH2(_ args: String...) throws -> (status: Int32, id: String?, output: String) {
        let result = try lab.exec("h2", [lab.handoffCLI, "continue", "--json"] + args)
        let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (result.status, (object?["activity"] as? [String: Any])?["id"] as? String, result.stdout + result.stderr)
    }

    func testContinueWithoutIDFromAPeerAndByPrefix() throws {
        try lab.waitUntil("h1 and h3 listed on h2", timeout: 10) {
            let peers = try lab.handoff("h2", "peers", "--json").stdout
            return peers.contains("\"h1\"") && peers.contains("\"h3\"")
        }
        let older = try lab.publish("h1", "--type", Self.type, "--title", "older, on h1")
        try lab.waitUntilListed(older, on: "h2")
        let newer = try lab.publish("h3", "--type", Self.type, "--title", "newer, on h3")
        try lab.waitUntilListed(newer, on: "h2")

        // list: newest first, short IDs, ages; --json keeps the whole ID and adds offeredAt.
        let listed = try lab.offered(on: "h2")
        XCTAssertEqual(listed.compactMap { $0["id"] as? String }.prefix(2), [newer, older])
        XCTAssertNotNil(listed.first?["offeredAt"] as? String)
        let text = try lab.handoff("h2", "list").stdout
        XCTAssertTrue(text.hasPrefix(String(newer.lowercased().prefix(8))), text)
        XCTAssertTrue(text.contains("ago") || text.contains("just now"), text)

        let latest = try continueOnH2()
        XCTAssertEqual(latest.status, 0, latest.output)
        XCTAssertEqual(latest.id, newer, "no ID: the newest on offer")
        let fromH1 = try continueOnH2("--from", "h1")
        XCTAssertEqual(fromH1.id, older, "--from h1: h1's")
        let byPrefix = try continueOnH2(String(older.lowercased().prefix(6)))
        XCTAssertEqual(byPrefix.id, older, "a unique prefix")

        let invalid = try lab.exec("h2", [lab.handoffCLI, "continue", "zz"])
        XCTAssertEqual(invalid.status, 64, invalid.stderr)
        XCTAssertTrue(invalid.stderr.contains("hexadecimal"), invalid.stderr)
        let nobody = try lab.exec("h2", [lab.handoffCLI, "continue", "--from", "nobody"])
        XCTAssertEqual(nobody.status, 1, nobody.stderr)
        XCTAssertTrue(nobody.stderr.contains("nobody offers no activity"), nobody.stderr)
        for host in ["h1", "h3"] { _ = try lab.handoff(host, "resign", host == "h1" ? older : newer) }
    }

    /// Publishes on `host` with a chosen activity ID, through the control socket's wire form
    /// (the CLI's publish makes the ID up): a client in another language, as docs/PROTOCOL.md has it.
    func publish(on host: String, id: String, title: String) throws {
        let script = """
            import json, socket, struct
            s = socket.socket(socket.AF_UNIX); s.connect('\(try lab.path(host))/handoff.sock')
            body = json.dumps({"command": "publish", "activity": {"id": "\(id)", "activityType": "\(Self.type)", "title": "\(title)"}}).encode()
            s.sendall(bytes([0x20]) + struct.pack('>I', len(body)) + body)
            head = s.recv(5); n = struct.unpack('>I', head[1:])[0]; data = b''
            while len(data) < n: data += s.recv(n - len(data))
            print(data.decode())
            """
        let result = try lab.exec(host, ["python3", "-c", script])
        XCTAssertTrue(result.stdout.contains("\"ok\""), result.stdout + result.stderr)
    }

    func testAnAmbiguousPrefixExits64ListingTheCandidates() throws {
        let (one, two) = ("ABCD0001-0000-4000-8000-000000000001", "ABCD0002-0000-4000-8000-000000000002")
        try publish(on: "h1", id: one, title: "first twin")
        try publish(on: "h3", id: two, title: "second twin")
        defer { _ = try? lab.handoff("h1", "resign", one); _ = try? lab.handoff("h3", "resign", two) }
        try lab.waitUntilListed(one, on: "h2", timeout: 10)
        try lab.waitUntilListed(two, on: "h2", timeout: 10)
        let ambiguous = try lab.exec("h2", [lab.handoffCLI, "continue", "abcd"])
        XCTAssertEqual(ambiguous.status, 64, ambiguous.stderr)
        for candidate in [one, two] { XCTAssertTrue(ambiguous.stderr.contains(candidate.lowercased()), ambiguous.stderr) }
        let json = try lab.exec("h2", [lab.handoffCLI, "continue", "abcd", "--json"])
        XCTAssertEqual(json.status, 64)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        XCTAssertEqual((object?["candidates"] as? [[String: Any]])?.count, 2, json.stdout)
        let text = try lab.handoff("h2", "list").stdout
        XCTAssertTrue(text.contains("abcd0001") && text.contains("abcd0002"), text)
        let chosen = try continueOnH2("abcd0002")
        XCTAssertEqual(chosen.id, two, chosen.output)
    }

    func testPauseWithdrawsTheAdvertisementAndOutlastsARestart() throws {
        let id = try lab.publish("h1", "--type", Self.type, "--title", "before the pause")
        try lab.waitUntilListed(id, on: "h2", timeout: 10)
        let paused = try lab.handoff("h1", "pause")
        XCTAssertEqual(paused.status, 0, paused.stderr)
        let took = try lab.waitUntil("h1's activity withdrawn on h2", timeout: 5) { try !lab.offered(on: "h2").contains { $0["id"] as? String == id } }
        print("pause: h1's activity gone from h2's list \(String(format: "%.3f", took)) s after `handoff pause`")
        XCTAssertTrue(try lab.handoff("h1", "status").stdout.contains("paused"))
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").json.errorCode, 4608)

        try lab.startAgent("h1", config: Self.config("h1"))
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h1", "status", "--json").stdout.utf8)) as? [String: Any]
        XCTAssertEqual(status?["paused"] as? Bool, true, "the pause outlasts a restart")
        let during = try lab.publish("h1", "--type", Self.type, "--title", "published while paused")
        Thread.sleep(forTimeInterval: 2)
        XCTAssertFalse(try lab.offered(on: "h2").contains { $0["id"] as? String == during }, "a paused host advertises nothing")

        XCTAssertEqual(try lab.handoff("h1", "resume").status, 0)
        try lab.waitUntilListed(during, on: "h2", timeout: 5)
        _ = try lab.handoff("h1", "resign", during)
    }
}

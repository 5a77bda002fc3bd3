import Foundation
import HandoffCore
import XCTest

/// The whole system on three simulated hosts (network namespaces on one bridge, each with its own
/// D-Bus, avahi-daemon and handoffd): real mDNS, real TCP, real processes.
///
/// h1 publishes, h2 continues (with handlers that record what they receive), h3 is a source the
/// tests stop, kill or make slow.
final class HandoffIntegrationTests: LabTestCase {
    override class var hostCount: Int { 3 }

    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1")
        try lab.startAgent("h2", config: continuingConfig(try lab.path("h2")))
        try lab.startAgent("h3")
        try lab.pair("h1", "h2", "h3")
    }

    /// h2: records every activity it continues, counts deliveries, opens URLs into a file.
    static func continuingConfig(_ dir: String) -> [String: Any] {
        [
            "limits": ["fetchTimeout": 1, "connectTimeout": 1],
            "handlers": [
                ["activityTypes": ["com.example.notes.slow"],
                 "command": ["sh", "-c", "sleep 2; echo x >> \"\(dir)/count-$HANDOFF_ACTIVITY_ID\""]],
                ["activityTypes": ["com.example.notes.edit", "com.example.notes.big"],
                 "command": ["sh", "-c", "cat > \"\(dir)/received-$HANDOFF_ACTIVITY_ID.json\"; echo x >> \"\(dir)/count-$HANDOFF_ACTIVITY_ID\""]],
                // What a handler inherits: its shell's descriptors and its environment.
                ["activityTypes": ["com.example.notes.probe"],
                 "command": ["sh", "-c", "ls -l /proc/$$/fd > \"\(dir)/fds-$HANDOFF_ACTIVITY_ID\"; env > \"\(dir)/env-$HANDOFF_ACTIVITY_ID\""]],
            ],
            "urlOpener": ["sh", "-c", "echo \"$1\" >> \"\(dir)/opened-urls\"", "sh"],
        ]
    }

    func received(_ id: String) throws -> String? {
        try? String(contentsOfFile: "\(try lab.path("h2"))/received-\(id).json", encoding: .utf8)
    }

    func deliveries(_ id: String) throws -> Int {
        let text = (try? String(contentsOfFile: "\(try lab.path("h2"))/count-\(id)", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").count
    }

    // MARK: Discovery

    func testPublishedActivityIsListedOnPeerWithinTwoSeconds() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Groceries")
        let elapsed = try lab.waitUntilListed(id, on: "h2", timeout: 2)
        print("listed on h2 after \(Int(elapsed * 1000)) ms")
        let entry = try XCTUnwrap(try lab.offered(on: "h2").first { $0["id"] as? String == id })
        XCTAssertEqual(entry["peer"] as? String, "h1")
        XCTAssertEqual(entry["activityType"] as? String, "com.example.notes.edit")
        XCTAssertEqual(entry["title"] as? String, "Groceries")
        try lab.handoff("h1", "resign", id)
    }

    /// The record in avahi-browse: the opaque instance name, the address and port, and a TXT
    /// record with the protocol version and sealed bytes only. The paired h2 reads the activity.
    func testAdvertisementInAvahiBrowseIsSealed() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Read by avahi-browse")
        try lab.waitUntilListed(id, on: "h2")
        let status = try lab.registeredStatus("h1")
        let agentID = try XCTUnwrap(status["agentID"] as? String)
        let port = try XCTUnwrap(status["port"] as? Int)
        let instance = try XCTUnwrap(status["registeredName"] as? String)
        XCTAssertFalse(instance.contains("h1"), "the instance name \(instance) must not name the host")
        let browse = try lab.exec("h2", ["avahi-browse", "-rpt", "_handoff._tcp"])
        XCTAssertEqual(browse.status, 0, browse.stderr)
        let line = try XCTUnwrap(browse.stdout.split(separator: "\n").first { $0.hasPrefix("=") && $0.contains(";\(instance);_handoff._tcp;") },
                                 "avahi-browse shows no resolved \(instance): \(browse.stdout)")
        let fields = line.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(fields[7], "198.18.0.1")
        XCTAssertEqual(fields[8], "\(port)")
        let txt = fields[9]
        XCTAssertTrue(txt.contains("\"v=3\""), txt)
        XCTAssertTrue(txt.contains("\"s0="), txt)
        for secret in [agentID, id, "com.example", "Read by", "title=", "type=", "aid="] {
            XCTAssertFalse(txt.contains(secret), "TXT \(txt) shows \(secret)")
        }
        try lab.handoff("h1", "resign", id)
    }

    func testStoppedAgentSendsGoodbyeAndIsNoLongerAPeer() throws {
        try lab.waitUntil("h3 is a peer of h2", timeout: 5) { try lab.handoff("h2", "peers").stdout.contains("h3 ") }
        try lab.stopAgent("h3")
        let elapsed = try lab.waitUntil("h3 gone from h2's peers", timeout: 5) { !(try lab.handoff("h2", "peers").stdout.contains("h3 ")) }
        print("goodbye seen after \(Int(elapsed * 1000)) ms")
        try lab.startAgent("h3")
        try lab.waitUntil("h3 back", timeout: 5) { try lab.handoff("h2", "peers").stdout.contains("h3 ") }
    }

    // MARK: Continuing

    /// The agent's peer listener, control socket and connections are sockets it never marks
    /// close-on-exec (NIO): a handler must hold none of them, and only the documented variables.
    func testHandlerInheritsOnlyStandardDescriptorsAndTheMinimalEnvironment() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.probe", "--title", "Probe")
        defer { _ = try? lab.handoff("h1", "resign", id) }
        try lab.waitUntilListed(id, on: "h2")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        let dir = try lab.path("h2")
        let listing = try String(contentsOfFile: "\(dir)/fds-\(id)", encoding: .utf8)
        var targets: [String: String] = [:]  // fd -> what it is open on
        for line in listing.split(separator: "\n") {
            guard let arrow = line.range(of: " -> "), let fd = line[..<arrow.lowerBound].split(separator: " ").last else { continue }
            targets[String(fd)] = String(line[arrow.upperBound...])
        }
        XCTAssertTrue(Set(targets.keys).isSuperset(of: ["0", "1", "2"]), listing)
        XCTAssertFalse(listing.contains("socket:"), listing)
        // Beyond 0, 1, 2 only the shell's own copy of its standard output, saved (at 10) while
        // `>` points fd 1 at the file: the agent's log, as fd 2 is.
        for (fd, target) in targets where !["0", "1", "2"].contains(fd) {
            XCTAssertEqual(target, targets["2"], "fd \(fd) was inherited: \(listing)")
        }
        let environment = try String(contentsOfFile: "\(dir)/env-\(id)", encoding: .utf8)
        let names = Set(environment.split(separator: "\n").compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        let allowed: Set<String> = [
            "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY",
            "DBUS_SESSION_BUS_ADDRESS", "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS", "XDG_DATA_HOME",
            "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "BROWSER",
            "HANDOFF_ACTIVITY_TYPE", "HANDOFF_ACTIVITY_ID", "HANDOFF_PEER",
            "PWD", "OLDPWD", "SHLVL", "_",  // set by the shell itself
        ]
        XCTAssertTrue(names.subtracting(allowed).filter { !$0.hasPrefix("LC_") }.isEmpty, "unexpected: \(names.subtracting(allowed).sorted())")
        XCTAssertTrue(environment.contains("HANDOFF_PEER=h1"), environment)
    }

    /// A handler's exit wakes none of the agent's idle threads (ChildExitSignals): its SIGCHLD,
    /// at the default action, is dropped where it is raised. Before, each exit woke the main
    /// thread (waiting in `dispatchMain`) to discard it.
    func testHandlerExitsDoNotWakeTheAgentsMainThread() throws {
        let before = try lab.agentMainThreadSwitches("h2")
        var ids: [String] = []
        for index in 0..<12 {
            let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Exit \(index)")
            ids.append(id)
            try lab.waitUntilListed(id, on: "h2")
            let (status, response) = try lab.continueActivity(id, on: "h2")
            XCTAssertEqual(status, 0, "\(response)")
            try lab.handoff("h1", "resign", id)
        }
        XCTAssertEqual(try ids.map(deliveries), Array(repeating: 1, count: ids.count), "every handler ran once")
        let woken = try lab.agentMainThreadSwitches("h2") - before
        XCTAssertLessThan(woken, ids.count / 2, "the main thread woke \(woken) times for \(ids.count) handler exits")
    }

    func testContinueDeliversIdenticalUserInfoToTheHandler() throws {
        let userInfoJSON = """
            {"s": "héllo ✓ \\"quoted\\"", "i": -9007199254740993, "max": 9223372036854775807, "d": 0.1, "neg0": -0.0, "big": 1e300,
             "yes": true, "no": false, "nothing": null, "data": {"$data": "AAEC/w=="}, "date": {"$date": "2026-11-22T10:00:00.250Z"},
             "url": {"$url": "https://example.com/a?b=c#d"}, "uuid": {"$uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"},
             "nan": {"$double": "nan"}, "arr": [1, "two", [3.5, {"k": []}]], "dict": {"nested": {"deep": {}}}, "escaped": {"$dict": {"$url": "not a url"}}}
            """
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "All types", "--user-info", userInfoJSON,
                                 "--webpage-url", "https://example.com/notes/1")
        try lab.waitUntilListed(id, on: "h2")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(response["handled"] as? Bool, true)
        XCTAssertEqual(response["by"] as? String, "handler")

        let text = try XCTUnwrap(try received(id), "the handler did not run")
        let activity = try Activity(json: try JSONValue(parsing: text))
        let expected = try UserInfo(userInfoJSON: try JSONValue(parsing: userInfoJSON))
        XCTAssertTrue(PropertyListValue.dictionary(activity.userInfo).isIdentical(to: .dictionary(expected)),
                      "handler got \(activity.userInfo), expected \(expected)")
        XCTAssertEqual(activity.activityType.rawValue, "com.example.notes.edit")
        XCTAssertEqual(activity.title, "All types")
        XCTAssertEqual(activity.webpageURL?.absoluteString, "https://example.com/notes/1")
        XCTAssertEqual(activity.id.uuidString, id)
        XCTAssertEqual(try deliveries(id), 1)
        try lab.handoff("h1", "resign", id)
    }

    func testRequiredUserInfoKeysLimitWhatIsTransferred() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--user-info", #"{"keep": 1, "drop": 2, "also": "x"}"#,
                                 "--required-keys", "keep,also")
        try lab.waitUntilListed(id, on: "h2")
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").status, 0)
        let activity = try Activity(json: try JSONValue(parsing: try XCTUnwrap(try received(id))))
        XCTAssertEqual(Set(activity.userInfo.keys), ["keep", "also"])
        try lab.handoff("h1", "resign", id)
    }

    func testOversizedUserInfoFailsWith4611AndNoHandlerRuns() throws {
        let blob = String(repeating: "x", count: 5000)
        let id = try lab.publish("h1", "--type", "com.example.notes.big", "--user-info", #"{"blob": "\#(blob)"}"#)
        try lab.waitUntilListed(id, on: "h2")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(response.errorCode, 4611, "\(response)")
        XCTAssertEqual((response["error"] as? [String: Any])?["name"] as? String, "userActivityHandoffUserInfoTooLarge")
        XCTAssertNil(try received(id), "a refused transfer must not reach a handler")
        XCTAssertEqual(try deliveries(id), 0)
        try lab.handoff("h1", "resign", id)
    }

    func testStoppedSourceAgentGives4609() throws {
        try lab.startAgent("h3")
        let id = try lab.publish("h3", "--type", "com.example.notes.edit", "--title", "source stops")
        try lab.waitUntilListed(id, on: "h2")
        try lab.stopAgent("h3")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(response.errorCode, 4609, "\(response)")
        XCTAssertNil(try received(id))
        try lab.startAgent("h3")
    }

    func testKilledSourceAgentGives4609() throws {
        try lab.startAgent("h3")
        let id = try lab.publish("h3", "--type", "com.example.notes.edit", "--title", "source killed")
        try lab.waitUntilListed(id, on: "h2")
        try lab.killAgent("h3")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(response.errorCode, 4609, "\(response)")
        XCTAssertNil(try received(id))
        try lab.startAgent("h3")
    }

    func testResignedActivityGives4608() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "resigned")
        try lab.waitUntilListed(id, on: "h2")
        XCTAssertEqual(try lab.handoff("h1", "resign", id).status, 0)
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(response.errorCode, 4608, "\(response)")
        XCTAssertNil(try received(id))
    }

    func testExpiredActivityIsWithdrawnAndGives4608() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "expires", "--expires-in", "1.5")
        try lab.waitUntilListed(id, on: "h2")
        try lab.waitUntil("expired activity withdrawn from h2's list", timeout: 5) {
            !(try lab.offered(on: "h2").contains { $0["id"] as? String == id })
        }
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(response.errorCode, 4608, "\(response)")
        XCTAssertNil(try received(id))
    }

    func testSourceHoldingBackDataLongerThanFetchTimeoutGives4610() throws {
        try lab.startAgent("h3", config: ["faults": ["payloadDelayMs": 3000]])
        let id = try lab.publish("h3", "--type", "com.example.notes.edit", "--title", "slow source")
        try lab.waitUntilListed(id, on: "h2")
        let start = Date()
        let (status, response) = try lab.continueActivity(id, on: "h2")
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertEqual(status, 1)
        XCTAssertEqual(response.errorCode, 4610, "\(response)")
        XCTAssertLessThan(elapsed, 2.5, "h2's fetchTimeout is 1 s")
        XCTAssertNil(try received(id))
        try lab.startAgent("h3")
    }

    func testConcurrentContinuesOfOneActivityRunTheHandlerOnce() throws {
        let id = try lab.publish("h1", "--type", "com.example.notes.slow", "--title", "exactly once")
        try lab.waitUntilListed(id, on: "h2")
        // The handler takes 2 s, so all three requests arrive while the first is in flight.
        let group = DispatchGroup()
        let statuses = LockedArray()
        let lab = self.lab
        for _ in 0..<3 {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                if let result = try? lab.continueActivity(id, on: "h2") { statuses.append(result.status) }
            }
        }
        group.wait()
        XCTAssertEqual(statuses.values, [0, 0, 0])
        XCTAssertEqual(try deliveries(id), 1, "three concurrent continues must run the handler once")
        try lab.handoff("h1", "resign", id)
    }

    func testWithoutHandlerTheWebpageURLIsOpened() throws {
        let id = try lab.publish("h1", "--type", "com.example.browser.page", "--webpage-url", "https://example.com/article?id=7")
        try lab.waitUntilListed(id, on: "h2")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(response["by"] as? String, "urlOpener")
        let opened = try String(contentsOfFile: "\(try lab.path("h2"))/opened-urls", encoding: .utf8)
        XCTAssertTrue(opened.contains("https://example.com/article?id=7"))
        try lab.handoff("h1", "resign", id)
    }

    func testWithoutHandlerOrURLTheFailureIsClear() throws {
        let id = try lab.publish("h1", "--type", "com.example.unhandled.thing")
        try lab.waitUntilListed(id, on: "h2")
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(response.errorCode, 4608)
        let message = try XCTUnwrap((response["error"] as? [String: Any])?["message"] as? String)
        XCTAssertTrue(message.contains("no handler takes com.example.unhandled.thing"), message)
        try lab.handoff("h1", "resign", id)
    }

    // MARK: Robustness

    func testMalformedPeerDoesNotTakeTheAgentDown() throws {
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff("h1", "status", "--json").stdout.utf8)) as! [String: Any]
        let port = try XCTUnwrap(status["port"] as? Int)
        // Junk over TCP from h2: HTTP, a header declaring 4 GiB, a bad hello body, random bytes,
        // and a connection that sends half a header and closes.
        let junk = """
            import socket
            for junk in [b'GET / HTTP/1.0\\r\\n\\r\\n', b'\\x01\\xff\\xff\\xff\\xff', b'\\x01\\x00\\x00\\x00\\x03abc', bytes(range(256)), b'\\x01\\x00']:
                s = socket.create_connection(('198.18.0.1', \(port)), timeout=5)
                s.sendall(junk)
                try:
                    s.recv(100)
                except Exception:
                    pass
                s.close()
            print('sent')
            """
        let sent = try lab.exec("h2", ["python3", "-c", junk])
        XCTAssertEqual(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "sent", sent.stderr)
        // A foreign service of the same type with a malformed TXT record.
        try lab.exec("h2", ["sh", "-c", "avahi-publish -s junk _handoff._tcp 9 x = '' v=99 >/dev/null 2>&1 &"])
        Thread.sleep(forTimeInterval: 1.5)

        XCTAssertEqual(try lab.handoff("h1", "status").status, 0, "h1's agent must still serve")
        XCTAssertFalse(try lab.handoff("h1", "peers").stdout.contains("junk"), "a foreign service is not a peer")
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--user-info", #"{"after": "junk"}"#)
        try lab.waitUntilListed(id, on: "h2")
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").status, 0)
        try lab.handoff("h1", "resign", id)
        try lab.exec("h2", ["pkill", "-f", "avahi-publish -s junk"])
    }

    func testAgentSurvivesAvahiDaemonRestart() throws {
        try lab.lab("avahi", "restart", "h1")
        try lab.waitUntil("h1 back as a peer of h2", timeout: 15) { try lab.handoff("h2", "peers").stdout.contains("h1 ") }
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--user-info", #"{"after": "restart"}"#)
        try lab.waitUntilListed(id, on: "h2", timeout: 10)
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").status, 0)
        try lab.handoff("h1", "resign", id)
    }

    /// `--socket` and `--json` before or after any subcommand's name, at any depth (issue 16,
    /// item 9): `handoff --socket P trust list` and `handoff --socket P fault list` used to fail.
    /// HANDOFF_SOCKET points nowhere, so only the option can reach the agent.
    func testSocketAndJSONOptionsAtAnyDepth() throws {
        let socket = "\(try lab.path("h3"))/handoff.sock"
        let forms: [[String]] = [
            ["--socket", socket, "status"], ["status", "--socket", socket], ["--socket=\(socket)", "--json", "status"],
            ["--socket", socket, "trust", "list"], ["trust", "--socket", socket, "list"], ["trust", "list", "--socket", socket],
            ["--json", "--socket", socket, "fault", "list"], ["fault", "list", "--json", "--socket", socket], ["fault", "--socket", socket],
            ["--socket", socket, "pair", "--list"], ["peers", "--json", "--socket", socket],
        ]
        for form in forms {
            let result = try lab.exec("h3", ["env", "HANDOFF_SOCKET=/nonexistent/handoff.sock", lab.handoffCLI] + form)
            XCTAssertEqual(result.status, 0, "handoff \(form.joined(separator: " ")): \(result.stderr)")
            if form.contains("--json") {
                XCTAssertNotNil(try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)), "handoff \(form.joined(separator: " ")): \(result.stdout)")
            }
        }
        // Without the option, HANDOFF_SOCKET is used, and its absence is reported clearly.
        let missing = try lab.exec("h3", ["env", "HANDOFF_SOCKET=/nonexistent/handoff.sock", lab.handoffCLI, "trust", "list"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("/nonexistent"), missing.stderr)
    }

    func testBadConfigIsRefusedNamingTheKey() throws {
        let dir = try lab.path("h3")
        let cases: [(String, String)] = [
            (#"{"limits": {"fetchTimeout": "soon"}}"#, "limits.fetchTimeout"),
            (#"{"limts": {}}"#, "limts"),
            (#"{"port": 70000}"#, "port"),
            (#"{"handlers": [{"activityTypes": ["notes"], "command": ["true"]}]}"#, "handlers[0].activityTypes"),
        ]
        for (json, key) in cases {
            try json.write(toFile: "\(dir)/bad.json", atomically: true, encoding: .utf8)
            let result = try lab.exec("h3", [lab.handoffd, "--config", "\(dir)/bad.json"])
            XCTAssertEqual(result.status, 78, "\(json): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("config key \(key)"), "\(json): \(result.stderr)")
        }
    }
}

/// A thread-safe list for the concurrency test.
final class LockedArray: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Int32] = []
    func append(_ value: Int32) { lock.lock(); storage.append(value); lock.unlock() }
    var values: [Int32] { lock.lock(); defer { lock.unlock() }; return storage }
}

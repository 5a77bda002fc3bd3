import Foundation
import XCTest

/// Desktop notifications on simulated hosts, against a real notification server: h2 gets a
/// desktop of its own for each test (a private D-Bus session bus, an X display from Xvfb, and
/// dunst as the notification server), and its agent is started with `DBUS_SESSION_BUS_ADDRESS`
/// pointing at that bus. h1 publishes. dunst is asked what it shows with `dunstctl`, and clicked
/// as a user would with `dunstctl action 0` (dunst's own invocation of the default action, which
/// emits `ActionInvoked`).
final class NotificationsOnHostsTests: LabTestCase {
    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1")
        try lab.startAgent("h2")
        try lab.pair("h1", "h2")
    }

    /// h2's agent: a handler that records each activity it continues.
    func continuingConfig(logLevel: String = "info") throws -> [String: Any] {
        let dir = try lab.path("h2")
        return [
            "logLevel": logLevel,
            "handlers": [["activityTypes": ["*"], "command": ["sh", "-c", "cat > \"\(dir)/received-$HANDOFF_ACTIVITY_ID.json\""]]],
        ]
    }

    func received(_ id: String) throws -> Bool {
        FileManager.default.fileExists(atPath: "\(try lab.path("h2"))/received-\(id).json")
    }

    // MARK: A desktop on h2

    /// Starts a private session bus on h2; returns its address.
    func startSessionBus() throws -> String {
        let socket = "\(try lab.path("h2"))/session-bus-\(UUID().uuidString.prefix(8))"
        _ = try startLogged("h2", ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=unix:path=\(socket)"], log: "session-bus")
        try lab.waitUntil("the session bus's socket", timeout: 10) { FileManager.default.fileExists(atPath: socket) }
        return "unix:path=\(socket)"
    }

    /// Starts an X display (Xvfb, on a free display number) and dunst on it, on the bus; returns
    /// the display number.
    @discardableResult
    func startNotificationServer(bus: String) throws -> String {
        let dir = try lab.path("h2")
        let displayFile = "\(dir)/display-\(UUID().uuidString.prefix(8))"
        _ = try startLogged("h2", ["sh", "-c", "exec Xvfb -displayfd 3 -nolisten tcp 3>'\(displayFile)'"], log: "xvfb")
        var display = ""
        try lab.waitUntil("Xvfb's display number", timeout: 10) {
            display = ((try? String(contentsOfFile: displayFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            return !display.isEmpty
        }
        _ = try startLogged("h2", ["env", "DISPLAY=:\(display)", "DBUS_SESSION_BUS_ADDRESS=\(bus)", "dunst"], log: "dunst")
        try lab.waitUntil("dunst on the session bus", timeout: 10) { (try? dunstctl(bus, "count", "displayed")) != nil }
        return display
    }

    /// Runs dunstctl on h2 against the bus; its output, or throws if it fails.
    @discardableResult
    func dunstctl(_ bus: String, _ args: String...) throws -> String {
        let result = try lab.exec("h2", ["env", "DBUS_SESSION_BUS_ADDRESS=\(bus)", "dunstctl"] + args)
        guard result.status == 0 else { throw LabError("dunstctl \(args.joined(separator: " ")) failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// How many notifications dunst shows now.
    func displayed(_ bus: String) throws -> Int { Int(try dunstctl(bus, "count", "displayed")) ?? -1 }

    /// The summaries of the notifications that dunst has closed (its history), newest first.
    func history(_ bus: String) throws -> [String] {
        let json = try JSONSerialization.jsonObject(with: Data(try dunstctl(bus, "history").utf8)) as? [String: Any]
        let entries = ((json?["data"] as? [Any])?.first as? [[String: Any]]) ?? []
        return entries.compactMap { ($0["summary"] as? [String: Any])?["data"] as? String }
    }

    /// h2's agent log since its last start.
    func agentLog() throws -> [String] {
        let lines = lab.logLines("\(try lab.path("h2"))/handoffd.log")
        return Array(lines.suffix(from: (lines.lastIndex { $0.hasPrefix("==== ") } ?? -1) + 1))
    }

    func resign(_ ids: String...) throws {
        for id in ids { try lab.handoff("h1", "resign", id) }
    }

    // MARK: Tests

    func testTheNotificationAppearsIsReplacedClosedAndClickingItContinues() throws {
        let bus = try startSessionBus()
        try startNotificationServer(bus: bus)
        try lab.startAgent("h2", config: try continuingConfig(logLevel: "debug"), environment: ["DBUS_SESSION_BUS_ADDRESS": bus])
        try lab.waitUntil("h2 using the notification server", timeout: 10) {
            try agentLog().contains { $0.contains("desktop notifications through the session bus") && $0.contains("dunst") }
        }
        XCTAssertEqual(try displayed(bus), 0)

        // h1 publishes: one notification.
        let first = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Shopping list")
        let listed = try lab.waitUntilListed(first, on: "h2", timeout: 10)
        let shown = try lab.waitUntil("the notification", timeout: 10) { try displayed(bus) == 1 }
        print("notifications: publish on h1 to listed on h2 \(Int(listed * 1000)) ms, then to the notification shown by dunst \(Int(shown * 1000)) ms")

        // A newer activity from h1 replaces it in place: still one, and none closed.
        let second = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Recipes")
        try lab.waitUntil("the notification for the newer activity", timeout: 10) {
            try agentLog().contains { $0.contains("notification posted") && $0.contains(second) }
        }
        XCTAssertEqual(try displayed(bus), 1)
        XCTAssertEqual(try history(bus), [], "the newer activity's notification replaces the first, rather than closing it and stacking another")

        // Resigned on h1 (nothing else on offer): the notification is closed.
        try resign(first, second)
        let closed = try lab.waitUntil("the notification closed", timeout: 10) { try displayed(bus) == 0 }
        print("notifications: resign on h1 to the notification closed on h2: \(Int(closed * 1000)) ms")
        XCTAssertEqual(try history(bus), ["Continue Recipes"])

        // Clicked: the activity is continued on h2 (the handler ran), and the notification goes.
        let third = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Packing list")
        defer { try? resign(third) }
        try lab.waitUntil("the third notification", timeout: 10) { try displayed(bus) == 1 }
        try dunstctl(bus, "action", "0")
        let ran = try lab.waitUntil("h2's handler for the clicked activity", timeout: 10) { try received(third) }
        print("notifications: click to the handler run on h2: \(Int(ran * 1000)) ms")
        try lab.waitUntil("the clicked notification closed", timeout: 10) { try displayed(bus) == 0 }
        let log = try agentLog()
        XCTAssertEqual(log.filter { $0.contains("notification clicked") }.count, 1)
        XCTAssertEqual(log.filter { $0.contains("continuation delivered") && $0.contains(third) }.count, 1)

        // Continued from the CLI: while it runs the notification says "Continuing…" (no app
        // answered willContinue with true), then it is closed.
        let fourth = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Road trip")
        defer { try? resign(fourth) }
        try lab.waitUntil("the fourth notification", timeout: 10) { try displayed(bus) == 1 }
        XCTAssertEqual(try lab.continueActivity(fourth, on: "h2").status, 0)
        try lab.waitUntil("the continued notification closed", timeout: 10) { try displayed(bus) == 0 }
        let closedNow = try history(bus)
        XCTAssertEqual(closedNow.first, "Continuing Road trip…", "\(closedNow)")
    }

    func testPauseClosesTheNotificationsAndResumeShowsTheOfferAgain() throws {
        let bus = try startSessionBus()
        try startNotificationServer(bus: bus)
        try lab.startAgent("h2", config: try continuingConfig(), environment: ["DBUS_SESSION_BUS_ADDRESS": bus])
        let offered = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Before the pause")
        try lab.waitUntil("the notification", timeout: 10) { try displayed(bus) == 1 }

        // `handoff pause` on h2 (Apple's "Allow Handoff" off): its notification goes, none is posted.
        XCTAssertEqual(try lab.handoff("h2", "pause").status, 0)
        let closed = try lab.waitUntil("the notification closed by the pause", timeout: 5) { try displayed(bus) == 0 }
        print("notifications: pause on h2 to its notification closed: \(Int(closed * 1000)) ms")
        let during = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "During the pause")
        try lab.waitUntilListed(during, on: "h2", timeout: 10)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try displayed(bus), 0, "a paused host posts no notification")

        // Resumed: the activity on offer is shown again.
        XCTAssertEqual(try lab.handoff("h2", "resume").status, 0)
        try lab.waitUntil("the offer shown again after resume", timeout: 5) { try displayed(bus) == 1 }
        try resign(offered, during)
        try lab.waitUntil("closed once resigned", timeout: 10) { try displayed(bus) == 0 }
    }

    func testWithoutASessionBusTheAgentSaysSoOnceAndContinuesAsBefore() throws {
        try lab.startAgent("h2", config: try continuingConfig(), environment: ["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""])
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "No desktop here")
        defer { try? resign(id) }
        try lab.waitUntilListed(id, on: "h2", timeout: 10)
        let (status, json) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(json)")
        XCTAssertTrue(try received(id))
        let said = try agentLog().filter { $0.contains("desktop notifications are off") }
        XCTAssertEqual(said.count, 1, "\(said)")
        XCTAssertTrue(said.first?.contains("no session bus") ?? false, "\(said)")
    }

    func testANotificationServerStartedLaterOrAgainIsPickedUp() throws {
        let bus = try startSessionBus()
        try lab.startAgent("h2", config: try continuingConfig(), environment: ["DBUS_SESSION_BUS_ADDRESS": bus])
        try lab.waitUntil("h2 saying there is no notification server", timeout: 10) {
            try agentLog().contains { $0.contains("desktop notifications are off") && $0.contains("org.freedesktop.Notifications") }
        }
        let id = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Later")
        defer { try? resign(id) }
        try lab.waitUntilListed(id, on: "h2", timeout: 10)

        // The server starts (as after logging in): the activity on offer is shown (the agent
        // sees the server take its bus name; not the 30 s retry).
        let display = try startNotificationServer(bus: bus)
        let picked = try lab.waitUntil("the notification once dunst runs", timeout: 10) { try displayed(bus) == 1 }
        print("notifications: dunst started to the notification shown: \(Int(picked * 1000)) ms")
        XCTAssertEqual(try agentLog().filter { $0.contains("desktop notifications are off") }.count, 1, "one line, however many retries")

        // The server exits and starts again: the activity still on offer is shown again.
        let dunst = started.removeLast()
        kill(dunst, SIGTERM)
        try lab.waitUntil("h2 noticing dunst exit", timeout: 10) { try agentLog().contains { $0.contains("the notification server exited") } }
        _ = try startLogged("h2", ["env", "DISPLAY=:\(display)", "DBUS_SESSION_BUS_ADDRESS=\(bus)", "dunst"], log: "dunst")
        try lab.waitUntil("the notification once dunst runs again", timeout: 10) { (try? displayed(bus)) == 1 }

        // The agent stops: its notifications go with it.
        try lab.stopAgent("h2")
        XCTAssertEqual(try displayed(bus), 0)
    }
}

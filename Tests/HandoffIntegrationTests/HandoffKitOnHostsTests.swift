import Foundation
import XCTest

/// HandoffKit apps (the notes example) on simulated hosts: the callback order across hosts, team
/// isolation, and a slow willSave.
final class HandoffKitOnHostsTests: XCTestCase {
    nonisolated(unsafe) static var lab: LabDriver!
    nonisolated(unsafe) static var setUpError: (any Error)?
    var lab: LabDriver { Self.lab }
    var notes: String { lab.binDirectory.appendingPathComponent("notes-example").path }
    var started: [Int32] = []

    override class func setUp() {
        super.setUp()
        do {
            lab = try LabDriver(hosts: 2)
            try lab.up()
            try lab.startAgent("h1")
            try lab.startAgent("h2", config: ["limits": ["fetchTimeout": 1]])
        } catch {
            setUpError = error
        }
    }

    override class func tearDown() {
        lab?.down()
        super.tearDown()
    }

    override func setUpWithError() throws {
        if let error = Self.setUpError { throw error }
    }

    override func tearDownWithError() throws {
        for pid in started { kill(pid, SIGTERM) }
        started = []
    }

    func start(_ host: String, _ args: [String], log name: String) throws -> String {
        let log = "\(try lab.path(host))/\(name).log"
        started.append(try lab.startBackground(host, [notes] + args, log: log))
        return log
    }

    func read(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func waitForLine(_ log: String, _ prefix: String, timeout: TimeInterval = 5) throws {
        try lab.waitUntil("\"\(prefix)\" in \(log)", timeout: timeout) { read(log).contains { $0.hasPrefix(prefix) } }
    }

    /// Starts the editor on h1 and returns the activity ID once h2 lists it.
    func edit(_ extra: [String] = []) throws -> (id: String, log: String) {
        let log = try start("h1", ["edit", "--title", "Shopping list", "--text", "milk, eggs"] + extra, log: "editor-\(UUID().uuidString.prefix(6))")
        try waitForLine(log, "editing")
        let line = read(log).first { $0.hasPrefix("editing") }!
        let id = String(line.split(separator: " ").first { $0.count == 36 }!)
        try lab.waitUntilListed(id, on: "h2")
        return (id, log)
    }

    func testCallbacksArriveInOrderAcrossHostsAndOnlyTheSameTeamsAppGetsThem() throws {
        let viewer = try start("h2", ["open"], log: "viewer")
        let rival = try start("h2", ["open", "--team", "RIVAL", "--bundle-id", "com.rival.notes"], log: "rival")
        try waitForLine(viewer, "ready")
        try waitForLine(rival, "ready")
        let (id, editor) = try edit()

        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(response["by"] as? String, "app")
        XCTAssertEqual(response["app"] as? String, "com.example.notes")
        try waitForLine(viewer, "didUpdate")
        try waitForLine(editor, "userActivityWasContinued")

        let viewerCalls = read(viewer).dropFirst().map { String($0.prefix { $0 != ":" }) }
        XCTAssertEqual(viewerCalls, ["willContinueUserActivity", "continue", "restoreUserActivityState", "didUpdate"])
        XCTAssertTrue(read(viewer).contains { $0.hasPrefix("restoreUserActivityState: \"Shopping list\": milk, eggs (saved ") },
                      "the note restored with the text the editor saved: \(read(viewer))")
        let editorCalls = read(editor).dropFirst().map { String($0.prefix { $0 != ":" }) }
        XCTAssertEqual(editorCalls, ["userActivityWillSave", "userActivityWasContinued"])
        XCTAssertEqual(read(rival).count, 1, "another team's app must get nothing: \(read(rival))")
    }

    func testSlowWillSaveGives4610AndDidFail() throws {
        let viewer = try start("h2", ["open"], log: "viewer-slow")
        try waitForLine(viewer, "ready")
        let (id, _) = try edit(["--save-delay-ms", "3000"])
        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(response.errorCode, 4610, "\(response)")
        try waitForLine(viewer, "didFailToContinueUserActivity")
        XCTAssertFalse(read(viewer).contains { $0.hasPrefix("continue:") }, "a failed continuation must not reach continue")
    }
}

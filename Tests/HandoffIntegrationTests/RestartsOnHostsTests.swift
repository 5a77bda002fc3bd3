import Foundation
import HandoffCore
import XCTest

/// An agent restart loses nothing (issue 20, "Restarts"): what `handoff publish` published comes
/// back from the state directory with its ID, and a HandoffKit app (the notes example) reconnects
/// and publishes its note again by itself. Nobody publishes anything again by hand.
final class RestartsOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }

    static let cliType = "com.example.restart.note"

    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1")
        try lab.startAgent("h2", config: try h2Config(lab))
        try lab.pair("h1", "h2")
    }

    /// h2 records the CLI's activity it continues in `<h2>/restart-received-ID.json`.
    static func h2Config(_ lab: LabDriver) throws -> [String: Any] {
        let dir = try lab.path("h2")
        return ["handlers": [["activityTypes": [cliType], "command": ["sh", "-c", "cat > \"\(dir)/restart-received-$HANDOFF_ACTIVITY_ID.json\""]]]]
    }

    func testAnAgentRestartLosesNeitherTheCLIsActivityNorTheAppsNote() throws {
        let userInfo = #"{"text": "kept across the restart", "n": 7, "when": {"$date": "2026-11-22T10:00:00.250Z"}}"#
        let cliID = try lab.publish("h1", "--type", Self.cliType, "--title", "From the CLI", "--user-info", userInfo)
        let viewer = try app("h2", ["open"], log: "restart-viewer")
        try lab.waitForLine(viewer, "ready")
        let (noteID, editor) = try editNote(on: "h1", listedOn: "h2")
        let editorPID = try XCTUnwrap(started.last)

        try lab.stopAgent("h1")
        // Kept in two slots written in turn (the publish wrote one); no single file, no temporary left.
        let state = try FileManager.default.contentsOfDirectory(atPath: "\(try lab.path("h1"))/state").filter { $0.hasPrefix("published-activities") }
        XCTAssertEqual(state, ["published-activities.0"], "\(state)")
        try lab.waitUntil("h2 no longer lists h1's note", timeout: 10) { try !lab.offered(on: "h2").contains { $0["id"] as? String == noteID } }
        try lab.startAgent("h1")
        let back = try lab.waitUntilListed(noteID, on: "h2", timeout: 10)
        print("the app's note listed on h2 \(Int(back * 1000)) ms after h1's agent started again")
        XCTAssertTrue(lab.logLines(editor).contains { $0.contains("reconnected to the handoff agent") }, "\(lab.logLines(editor))")

        let (status, response) = try lab.continueActivity(noteID, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        XCTAssertEqual(response["app"] as? String, "com.example.notes")
        try lab.waitForLine(viewer, "didUpdate")
        XCTAssertTrue(lab.logLines(viewer).contains { $0.hasPrefix("restoreUserActivityState: \"Shopping list\": milk, eggs") }, "\(lab.logLines(viewer))")

        // The editor quits: its note goes, and the CLI's activity, kept by h1, is current again.
        kill(editorPID, SIGTERM)
        try lab.waitUntilListed(cliID, on: "h2", timeout: 10)
        let (cliStatus, cliResponse) = try lab.continueActivity(cliID, on: "h2")
        XCTAssertEqual(cliStatus, 0, "\(cliResponse)")
        XCTAssertEqual(cliResponse["by"] as? String, "handler")
        let text = try String(contentsOfFile: "\(try lab.path("h2"))/restart-received-\(cliID).json", encoding: .utf8)
        let activity = try Activity(json: try JSONValue(parsing: text))
        XCTAssertEqual(activity.id.uuidString, cliID)
        XCTAssertEqual(activity.title, "From the CLI")
        let expected = try UserInfo(userInfoJSON: try JSONValue(parsing: userInfo))
        XCTAssertTrue(PropertyListValue.dictionary(activity.userInfo).isIdentical(to: .dictionary(expected)), "\(activity.userInfo)")
        XCTAssertEqual(try lab.handoff("h1", "resign", cliID).status, 0)
    }
}

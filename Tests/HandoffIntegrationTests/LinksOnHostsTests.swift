import Foundation
import XCTest

/// Links that last on simulated hosts. h1 makes a link, then its agent stops (the activity is
/// gone); h2, which never paired with h1, continues the link: into the notes example, launched
/// from its manifest, or, when no app declares the type, through its URL opener; a note the app
/// no longer has falls back to the link's web page.
final class LinksOnHostsTests: LabTestCase {
    static let page = "https://example.com/notes/7?from=link"

    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1")
        try lab.startAgent("h2", config: try h2Config(lab))
    }

    /// h2's URL opener writes the URL to `<h2>/opened-url`; with `apps`, h2 launches apps from there.
    static func h2Config(_ lab: LabDriver, apps: String? = nil) throws -> [String: Any] {
        let opened = "\(try lab.path("h2"))/opened-url"
        var config: [String: Any] = ["urlOpener": ["sh", "-c", "printf '%s' \"$1\" > '\(opened)'", "url-opener"]]
        if let apps { config["appsDirectory"] = apps }
        return config
    }

    func testALinkOutlivesItsActivityAndAgentAndContinuesOnAnotherHost() throws {
        _ = try lab.publish("h1", "--type", "com.example.docs.view", "--title", "Groceries & more", "--persistent-id", "note-7",
                            "--webpage-url", Self.page)
        let made = try lab.handoff("h1", "link", "--persistent-id", "note-7")
        XCTAssertEqual(made.status, 0, made.stderr)
        let link = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(link.hasPrefix("x-handoff:continue?v=1&type=com.example.docs.view&persistentIdentifier=note-7&webpageURL="), link)
        try lab.stopAgent("h1")

        let continued = try lab.handoff("h2", "continue", link)
        XCTAssertEqual(continued.status, 0, continued.stderr)
        XCTAssertTrue(continued.stdout.contains("continued com.example.docs.view from a link (taken by urlOpener)"), continued.stdout)
        let opened = "\(try lab.path("h2"))/opened-url"
        XCTAssertEqual(try String(contentsOfFile: opened, encoding: .utf8), Self.page, "exactly the link's webpageURL")

        // A tampered link is refused with the reason, and nothing is opened.
        try FileManager.default.removeItem(atPath: opened)
        let tampered = try lab.handoff("h2", "continue", link + "&userInfo=x")
        XCTAssertEqual(tampered.status, 1)
        XCTAssertTrue(tampered.stderr.contains("unknown item \"userInfo\""), tampered.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: opened))
    }

    func testALinkToANoteContinuesInTheAppLaunchedOnAnotherHostAfterBothAgentsRestart() throws {
        try lab.startAgent("h1")
        let editor = try app("h1", ["edit", "--title", "Shopping list", "--text", "milk, eggs"], log: "link-editor")
        try lab.waitForLine(editor, "editing")
        let id = try XCTUnwrap(lab.logLines(editor).first { $0.hasPrefix("editing") }?.split(separator: " ").first { $0.count == 36 }.map(String.init))
        let made = try lab.handoff("h1", "link", String(id.prefix(8)))
        XCTAssertEqual(made.status, 0, made.stderr)
        let link = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertFalse(link.contains("milk"), "a link carries no userInfo: \(link)")
        // The editor quits (its activity is resigned), and h1's agent restarts: the activity is gone.
        let editorPattern = "notes-example edit --title Shopping list"
        _ = try lab.exec("h1", ["pkill", "-TERM", "-f", editorPattern])
        try lab.waitUntil("the editor quit", timeout: 5) { try lab.exec("h1", ["pgrep", "-f", editorPattern]).status != 0 }
        try lab.stopAgent("h1")
        try lab.startAgent("h1")
        XCTAssertFalse(try lab.handoff("h1", "status", "--json").stdout.contains(id), "the resigned activity came back on h1")

        // h2 restarts with the notes app in its appsDirectory, not running.
        let h2 = try lab.path("h2")
        let apps = "\(h2)/link-apps", log = "\(h2)/link-launched.log"
        try FileManager.default.createDirectory(atPath: apps, withIntermediateDirectories: true)
        let manifest: [String: Any] = [
            "bundleID": "com.example.notes", "teamID": "EXAMPLETEAM", "activityTypes": ["com.example.notes.edit"],
            "launch": ["sh", "-c", "exec '\(notes)' open --once > '\(log)' 2>&1"],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: "\(apps)/notes.json"))
        try lab.startAgent("h2", config: try Self.h2Config(lab, apps: apps))
        defer { try? lab.startAgent("h2", config: try Self.h2Config(lab)) }

        let continued = try lab.handoff("h2", "continue", link)
        XCTAssertEqual(continued.status, 0, continued.stderr)
        XCTAssertTrue(continued.stdout.contains("from a link (taken by the app com.example.notes)"), continued.stdout)
        try lab.waitForLine(log, "didUpdate")
        let lines = lab.logLines(log)
        XCTAssertTrue(lines.contains("continue: \"Shopping list\""), "\(lines)")
        XCTAssertTrue(lines.contains("restoreUserActivityState: \"Shopping list\": "), "restored from the link, with no userInfo: \(lines)")
    }

    func testALinkToANoteTheAppNoLongerHasFallsBackToTheWebURL() throws {
        try lab.startAgent("h1")
        let page = "https://example.com/notes/weekend"
        let editor = try app("h1", ["edit", "--id", "weekend-7", "--title", "Weekend", "--text", "pack the tent",
                                    "--url", page, "--store", "\(try lab.path("h1"))/notes"], log: "gone-editor")
        try lab.waitForLine(editor, "editing")
        let made = try lab.handoff("h1", "link", "--persistent-id", "weekend-7")
        XCTAssertEqual(made.status, 0, made.stderr)
        let link = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        // h2's notes app has its own store, without that note: it declines, and the page opens.
        let h2 = try lab.path("h2")
        let viewer = try app("h2", ["open", "--store", "\(h2)/notes"], log: "gone-viewer")
        try lab.waitForLine(viewer, "ready")
        let opened = "\(h2)/opened-url"
        try? FileManager.default.removeItem(atPath: opened)
        let fellBack = try lab.handoff("h2", "continue", link)
        XCTAssertEqual(fellBack.status, 0, fellBack.stderr)
        XCTAssertTrue(fellBack.stdout.contains("(taken by urlOpener)"), fellBack.stdout)
        XCTAssertEqual(try String(contentsOfFile: opened, encoding: .utf8), page)
        XCTAssertTrue(lab.logLines(viewer).contains("continue: no note weekend-7 in \(h2)/notes"), "\(lab.logLines(viewer))")

        // Once the store has the note, the same link opens it there, from the store.
        try FileManager.default.removeItem(atPath: opened)
        try FileManager.default.createDirectory(atPath: "\(h2)/notes", withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: ["title": "Weekend", "text": "pack the tent"])
            .write(to: URL(fileURLWithPath: "\(h2)/notes/weekend-7.json"))
        let continued = try lab.handoff("h2", "continue", link)
        XCTAssertTrue(continued.stdout.contains("from a link (taken by the app com.example.notes)"), continued.stdout + continued.stderr)
        try lab.waitForLine(viewer, "restoreUserActivityState: \"Weekend\": pack the tent")
        XCTAssertFalse(FileManager.default.fileExists(atPath: opened))
    }
}

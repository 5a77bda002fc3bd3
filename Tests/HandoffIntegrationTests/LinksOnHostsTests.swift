import Foundation
import XCTest

/// Links that last on simulated hosts: h1 makes a link to an activity published with a
/// persistent identifier and a web page, then its agent stops (the activity is gone); h2, which
/// never paired with h1, continues the link: no app there declares the type, so its URL opener
/// gets the web page.
final class LinksOnHostsTests: LabTestCase {
    static let page = "https://example.com/notes/7?from=link"

    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1")
        let opened = "\(try lab.path("h2"))/opened-url"
        try lab.startAgent("h2", config: ["urlOpener": ["sh", "-c", "printf '%s' \"$1\" > '\(opened)'", "url-opener"]])
    }

    func testALinkOutlivesItsActivityAndAgentAndContinuesOnAnotherHost() throws {
        _ = try lab.publish("h1", "--type", "com.example.notes.edit", "--title", "Groceries & more", "--persistent-id", "note-7",
                            "--webpage-url", Self.page)
        let made = try lab.handoff("h1", "link", "--persistent-id", "note-7")
        XCTAssertEqual(made.status, 0, made.stderr)
        let link = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(link.hasPrefix("x-handoff:continue?v=1&type=com.example.notes.edit&persistentIdentifier=note-7&webpageURL="), link)
        try lab.stopAgent("h1")

        let continued = try lab.handoff("h2", "continue", link)
        XCTAssertEqual(continued.status, 0, continued.stderr)
        XCTAssertTrue(continued.stdout.contains("continued com.example.notes.edit from a link (taken by urlOpener)"), continued.stdout)
        let opened = "\(try lab.path("h2"))/opened-url"
        XCTAssertEqual(try String(contentsOfFile: opened, encoding: .utf8), Self.page, "exactly the link's webpageURL")

        // A tampered link is refused with the reason, and nothing is opened.
        try FileManager.default.removeItem(atPath: opened)
        let tampered = try lab.handoff("h2", "continue", link + "&userInfo=x")
        XCTAssertEqual(tampered.status, 1)
        XCTAssertTrue(tampered.stderr.contains("unknown item \"userInfo\""), tampered.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: opened))
    }
}

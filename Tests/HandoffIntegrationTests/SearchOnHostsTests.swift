import Foundation
import XCTest

/// Saved activities and search on simulated hosts: `handoff publish --searchable` saves an
/// activity in h1's index, `handoff search` finds it there after it is resigned and after the
/// agent restarts, h2 finds it with `--devices all`, and `handoff saved delete` and expiry
/// remove it.
final class SearchOnHostsTests: LabTestCase {
    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1")
        try lab.startAgent("h2")
        try lab.pair("h1", "h2")
    }

    /// `handoff search ARGS --json` on `host`: the results' "device: title" and the whole answer.
    func search(_ host: String, _ args: String...) throws -> (found: [String], answer: [String: Any]) {
        let result = try lab.exec(host, [lab.handoffCLI, "search"] + args + ["--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let answer = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout)
        let results = answer["results"] as? [[String: Any]] ?? []
        return (results.map { "\($0["device"] as? String ?? "?"): \($0["title"] as? String ?? "")" }, answer)
    }

    func testSavedActivitiesAreFoundHereOnPairedDevicesAndAfterARestart() throws {
        let id = try lab.publish("h1", "--type", "com.example.docs.edit", "--title", "Quarterly budget 2026", "--searchable",
                                 "--keywords", "finance,q3", "--persistent-id", "budget-doc", "--webpage-url", "https://example.com/budget")
        _ = try lab.publish("h1", "--type", "com.example.docs.edit", "--title", "Quarterly plan (not searchable)")
        XCTAssertEqual(try lab.handoff("h1", "resign", id).status, 0)

        let (found, answer) = try search("h1", "quarterly")
        XCTAssertEqual(found, ["h1: Quarterly budget 2026"], "resigned, still saved; the unsearchable one is not")
        let first = try XCTUnwrap((answer["results"] as? [[String: Any]])?.first)
        XCTAssertEqual(first["persistentIdentifier"] as? String, "budget-doc")
        XCTAssertEqual(first["webpageURL"] as? String, "https://example.com/budget")
        XCTAssertEqual(first["activityType"] as? String, "com.example.docs.edit")
        XCTAssertNotNil(first["savedAt"] as? String)
        XCTAssertEqual(try search("h1", "fin").found.count, 1, "keywords, as prefixes")

        // h2 has nothing of its own; --devices all asks h1, named as h2 stored it when pairing.
        XCTAssertEqual(try search("h2", "budget").found, [])
        let text = try lab.handoff("h2", "search", "budget")
        XCTAssertTrue(text.stdout.contains("nothing saved matches"), text.stdout)
        XCTAssertEqual(try search("h2", "budget", "--devices", "all").found, ["h1: Quarterly budget 2026"])
        let line = try lab.handoff("h2", "search", "budget", "--devices", "all")
        XCTAssertTrue(line.stdout.contains("Quarterly budget 2026  com.example.docs.edit  on h1  [budget-doc]"), line.stdout)

        // The index lasts: a restarted agent still finds it.
        try lab.startAgent("h1")
        XCTAssertEqual(try search("h1", "quarterly").found, ["h1: Quarterly budget 2026"])

        let deleted = try lab.handoff("h1", "saved", "delete", "--persistent-id", "budget-doc")
        XCTAssertTrue(deleted.stdout.contains("deleted 1 saved activity"), deleted.stdout + deleted.stderr)
        XCTAssertEqual(try search("h1", "quarterly").found, [])
        XCTAssertEqual(try search("h2", "budget", "--devices", "all").found, [], "deleted on h1, so h2 no longer finds it there")
    }

    func testTheExampleAppsNoteIsFound() throws {
        let store = "\(try lab.path("h1"))/search-notes"
        let editor = try app("h1", ["edit", "--id", "groceries-7", "--title", "Groceries for the weekend", "--text", "milk, eggs",
                                    "--keywords", "shopping,market", "--store", store], log: "search-editor")
        try lab.waitForLine(editor, "editing")
        let (found, answer) = try search("h1", "market")
        XCTAssertEqual(found, ["h1: Groceries for the weekend"], "found by a keyword")
        let first = try XCTUnwrap((answer["results"] as? [[String: Any]])?.first)
        XCTAssertEqual(first["persistentIdentifier"] as? String, "groceries-7", "the note's ID")
        XCTAssertEqual(first["activityType"] as? String, "com.example.notes.edit")
        XCTAssertEqual(try search("h1", "weekend").found, ["h1: Groceries for the weekend"], "and by the title's words")
    }

    func testExpiredActivitiesAreNotFoundAndBadQueriesSayWhy() throws {
        _ = try lab.publish("h1", "--type", "com.example.docs.edit", "--title", "Fleeting note", "--searchable", "--expires-in", "1")
        XCTAssertEqual(try search("h1", "fleeting").found, ["h1: Fleeting note"])
        Thread.sleep(forTimeInterval: 1.2)
        XCTAssertEqual(try search("h1", "fleeting").found, [], "gone at its expirationDate")

        let noWords = try lab.handoff("h1", "search", "***")
        XCTAssertEqual(noWords.status, 1)
        XCTAssertTrue(noWords.stderr.contains("has no word to search for"), noWords.stderr)
        let neither = try lab.handoff("h1", "saved", "delete")
        XCTAssertNotEqual(neither.status, 0)
        XCTAssertTrue(neither.stderr.contains("--persistent-id ID... or --all"), neither.stderr)
    }
}

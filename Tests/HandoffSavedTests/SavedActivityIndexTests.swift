import Foundation
import HandoffCore
import HandoffSaved
import XCTest

final class SavedActivityIndexTests: XCTestCase {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func activity(_ title: String, type: String = "com.example.notes.edit", persistentID: String? = nil, keywords: Set<String> = [],
                  attributes: [String: PropertyListValue]? = nil, url: String? = nil, expires: Date? = nil) -> Activity {
        Activity(activityType: ActivityType(rawValue: type)!, title: title, contentAttributeSet: attributes, keywords: keywords,
                 persistentIdentifier: persistentID, isEligibleForSearch: true, expirationDate: expires, webpageURL: url.flatMap(URL.init(string:)))
    }

    /// The titles `query` finds at `at` (default: now), best first.
    func titles(_ index: SavedActivityIndex, _ query: String, at: Date? = nil) async throws -> [String] {
        try await index.search(query, device: "h1", now: at ?? now).compactMap(\.title)
    }

    func testFindsByTitleKeywordsAttributeTextAndURL() async throws {
        let index = try SavedActivityIndex(path: nil)
        try await index.save(activity("Budget 2026", persistentID: "note-1"), bundleID: "com.example.notes", at: now)
        try await index.save(activity("Groceries", keywords: ["shopping", "weekly"]), bundleID: nil, at: now)
        try await index.save(activity("Trip", attributes: ["contentDescription": .string("Lisbon itinerary"), "nested": .array([.string("tram 28")])]),
                             bundleID: nil, at: now)
        try await index.save(activity("Reading", url: "https://example.com/papers/raft"), bundleID: nil, at: now)

        var found = try await titles(index, "budget")
        XCTAssertEqual(found, ["Budget 2026"])
        found = try await titles(index, "shop")
        XCTAssertEqual(found, ["Groceries"], "words match as prefixes")
        found = try await titles(index, "lisbon")
        XCTAssertEqual(found, ["Trip"])
        found = try await titles(index, "tram")
        XCTAssertEqual(found, ["Trip"], "nested attribute text is indexed")
        found = try await titles(index, "raft")
        XCTAssertEqual(found, ["Reading"])
        found = try await titles(index, "budget lisbon")
        XCTAssertEqual(found, [], "every word must match")

        let results = try await index.search("budget", device: "h1", now: now)
        let first = try XCTUnwrap(results.first)
        XCTAssertEqual(first.persistentIdentifier, "note-1")
        XCTAssertEqual(first.bundleID, "com.example.notes")
        XCTAssertEqual(first.device, "h1")
        XCTAssertEqual(first.savedAt, now)
        XCTAssertNil(first.webpageURL)
    }

    func testCaseAndDiacriticsFold() async throws {
        let index = try SavedActivityIndex(path: nil)
        try await index.save(activity("Café menu"), bundleID: nil, at: now)
        var found = try await titles(index, "CAFE")
        XCTAssertEqual(found, ["Café menu"])
        found = try await titles(index, "café")
        XCTAssertEqual(found, ["Café menu"])
    }

    func testTitleRanksAboveBody() async throws {
        let index = try SavedActivityIndex(path: nil)
        try await index.save(activity("Notes", attributes: ["contentDescription": .string("about the quarterly budget")]), bundleID: nil, at: now)
        try await index.save(activity("Budget"), bundleID: nil, at: now)
        let found = try await titles(index, "budget")
        XCTAssertEqual(found, ["Budget", "Notes"])
    }

    func testPublishingAgainReplacesBySameIDOrPersistentIdentifier() async throws {
        let index = try SavedActivityIndex(path: nil)
        var first = activity("Draft one", persistentID: "doc-7")
        try await index.save(first, bundleID: "com.example.notes", at: now)
        first.title = "Draft two"
        try await index.save(first, bundleID: "com.example.notes", at: now)
        try await index.save(activity("Draft three", persistentID: "doc-7"), bundleID: "com.example.notes", at: now)
        let found = try await titles(index, "draft")
        XCTAssertEqual(found, ["Draft three"])
        // Another app's identifier is its own.
        try await index.save(activity("Draft other", persistentID: "doc-7"), bundleID: "com.example.other", at: now)
        let count = try await index.count()
        XCTAssertEqual(count, 2)
    }

    func testExpiredActivitiesAreNeitherFoundNorKept() async throws {
        let index = try SavedActivityIndex(path: nil)
        try await index.save(activity("Soon gone", expires: now.addingTimeInterval(60)), bundleID: nil, at: now)
        var found = try await titles(index, "gone")
        XCTAssertEqual(found, ["Soon gone"])
        found = try await titles(index, "gone", at: now.addingTimeInterval(60))
        XCTAssertEqual(found, [])
        let deleted = try await index.deleteExpired(now: now.addingTimeInterval(61))
        let count = try await index.count()
        XCTAssertEqual([deleted, count], [1, 0])
        // A save removes what expired by then.
        try await index.save(activity("Short", expires: now.addingTimeInterval(5)), bundleID: nil, at: now)
        try await index.save(activity("Later"), bundleID: nil, at: now.addingTimeInterval(10))
        let left = try await index.count()
        XCTAssertEqual(left, 1)
    }

    func testAnAppDeletesOnlyItsOwnAndTheUserDeletesAny() async throws {
        let index = try SavedActivityIndex(path: nil)
        try await index.save(activity("A", persistentID: "p1"), bundleID: "com.example.a", at: now)
        try await index.save(activity("B", persistentID: "p1"), bundleID: "com.example.b", at: now)
        try await index.save(activity("C", persistentID: "p2"), bundleID: "com.example.b", at: now)
        try await index.save(activity("D"), bundleID: nil, at: now)
        var deleted: [Int] = []
        deleted.append(try await index.delete(persistentIdentifiers: ["p1"], by: .app(bundleID: "com.example.a")))
        deleted.append(try await index.deleteAll(by: .app(bundleID: "com.example.a")))
        deleted.append(try await index.delete(persistentIdentifiers: ["p2", "missing"], by: .user))
        deleted.append(try await index.deleteAll(by: .app(bundleID: "com.example.b")))
        XCTAssertEqual(deleted, [1, 0, 1, 1])
        let left = try await titles(index, "d")
        XCTAssertEqual(left, ["D"])
        let all = try await index.deleteAll(by: .user)
        XCTAssertEqual(all, 1)
    }

    func testOldestGoBeyondTheMaximum() async throws {
        let index = try SavedActivityIndex(path: nil, maximumCount: 3)
        for n in 1...5 { try await index.save(activity("Item \(n)"), bundleID: nil, at: now.addingTimeInterval(Double(n))) }
        let found = try await titles(index, "item")
        XCTAssertEqual(Set(found), ["Item 3", "Item 4", "Item 5"])
    }

    func testAQueryWithoutWordsIsAClearErrorAndSyntaxIsNeverPassedThrough() async throws {
        let index = try SavedActivityIndex(path: nil)
        do {
            _ = try await index.search("  \"* ", device: "h1", now: now)
            XCTFail("a query without words was accepted")
        } catch {
            XCTAssertTrue("\(error)".contains("no word to search for"), "\(error)")
        }
        // Operators, column filters and quotes are words like any other.
        try await index.save(activity("near or not title"), bundleID: nil, at: now)
        for query in ["NEAR OR NOT", "title: near", "\"near", "(near) -not"] {
            let found = try await titles(index, query)
            XCTAssertEqual(found, ["near or not title"], query)
        }
    }

    func testTheIndexLastsOnDisk() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("saved-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("saved.sqlite").path
        try await SavedActivityIndex(path: path).save(activity("Kept across restarts"), bundleID: nil, at: now)
        let found = try await titles(SavedActivityIndex(path: path), "restarts")
        XCTAssertEqual(found, ["Kept across restarts"])
    }
}

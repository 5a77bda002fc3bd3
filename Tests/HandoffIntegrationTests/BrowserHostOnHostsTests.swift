import Foundation
import XCTest

/// The browser extension's native-messaging host (issue 19, item 1) on two simulated hosts: a
/// program that speaks the extension's side of native messaging (scripts/lab-browser-extension.py)
/// runs `handoff browser-host` on h1; h2 lists the page as an `NSUserActivityTypeBrowsingWeb`
/// activity, and continuing it calls h2's URL opener with exactly that URL. A private window's
/// page withdraws it, and the browser closing the channel ends the host.
final class BrowserHostOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }

    override class func prepare(_ lab: LabDriver) throws {
        let opened = "\(try lab.path("h2"))/opened-url"
        try lab.startAgent("h1")
        try lab.startAgent("h2", config: ["urlOpener": ["sh", "-c", "printf '%s' \"$1\" > '\(opened)'", "url-opener"]])
        try lab.pair("h1", "h2")
    }

    /// Writes a step for the extension's stand-in and waits for the host's answers.
    func step(_ directory: String, _ number: Int, _ messages: [[String: Any]]) throws -> [[String: Any]] {
        try XCTUnwrap(lab.exchangeStep(directory, number, messages) as? [[String: Any]])
    }

    func testThePageIsListedOnThePeerAndContinuingOpensExactlyItsURL() throws {
        let directory = "\(try lab.path("h1"))/extension-\(UUID().uuidString.prefix(6))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = lab.packageRoot.appendingPathComponent("scripts/lab-browser-extension.py").path
        _ = try startLogged("h1", ["python3", script, directory, lab.handoffCLI], log: "browser-extension")

        let url = "https://example.com/handoff?q=a%20b&x=1#part"
        let first = try step(directory, 1, [["type": "page", "url": url, "title": "Example page", "incognito": false]])
        XCTAssertEqual(first.first?["ok"] as? Bool, true, "\(first)")
        let id = try XCTUnwrap(first.first?["offered"] as? String, "\(first)")
        try lab.waitUntilListed(id, on: "h2", timeout: 2)
        let offer = try lab.offered(on: "h2").first { $0["id"] as? String == id }
        XCTAssertEqual(offer?["activityType"] as? String, "NSUserActivityTypeBrowsingWeb")
        XCTAssertEqual(offer?["title"] as? String, "Example page")

        let (status, response) = try lab.continueActivity(id, on: "h2")
        XCTAssertEqual(status, 0, "\(response)")
        let opened = "\(try lab.path("h2"))/opened-url"
        try lab.waitUntil("h2's URL opener ran", timeout: 5) { FileManager.default.fileExists(atPath: opened) }
        XCTAssertEqual(try String(contentsOfFile: opened, encoding: .utf8), url, "exactly the page's URL")

        // A private window's page is never offered, and withdraws the page offered before.
        let second = try step(directory, 2, [["type": "page", "url": "https://example.com/private", "title": "Secret", "incognito": true]])
        XCTAssertEqual(second.first?["ok"] as? Bool, true, "\(second)")
        XCTAssertNil(second.first?["offered"], "\(second)")
        // Withdrawn by DNS-SD alone (a TXT update): right after the previous change, Avahi's
        // announcement timers took 0.03–4.1 s over six runs (2026-11-26), so 3 s failed about
        // one run in three; the bound is patience, not a latency target (BENCHMARKS' visible row).
        try lab.waitUntil("the page withdrawn from h2", timeout: 10) { try lab.offered(on: "h2").isEmpty }
        let held = try lab.handoff("h1", "status", "--json").stdout
        XCTAssertFalse(held.contains("example.com/private"), held)

        // The browser closes the channel: the host ends, at once and with status 0.
        FileManager.default.createFile(atPath: "\(directory)/close", contents: nil)
        try lab.waitUntil("the host's exit", timeout: 5) { FileManager.default.fileExists(atPath: "\(directory)/exit") }
        XCTAssertEqual(try String(contentsOfFile: "\(directory)/exit", encoding: .utf8), "0")
    }
}

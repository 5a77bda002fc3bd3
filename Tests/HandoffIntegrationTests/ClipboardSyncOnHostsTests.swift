import Foundation
import XCTest

/// `clipboard.sync` against the real X11 clipboard: each simulated host gets an X display
/// (Xvfb) and its agent runs with `DISPLAY` and `clipboard.sync` on. Text copied with xclip on
/// h1 appears in h2's clipboard (`xclip -o`) within a few seconds, and is not offered back; the
/// other way too. An item over `clipboard.syncMaxBytes` is left for `handoff paste`.
final class ClipboardSyncOnHostsTests: LabTestCase {
    /// Starts Xvfb on `host` (a free display number); returns the display, as `:N`.
    func startDisplay(on host: String) throws -> String {
        let file = "\(try lab.path(host))/display-\(UUID().uuidString.prefix(8))"
        _ = try startLogged(host, ["sh", "-c", "exec Xvfb -displayfd 3 -nolisten tcp 3>'\(file)'"], log: "xvfb")
        var display = ""
        try lab.waitUntil("Xvfb's display number on \(host)", timeout: 10) {
            display = ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            return !display.isEmpty
        }
        return ":\(display)"
    }

    /// Copies `text` to `host`'s X clipboard with xclip (which forks to keep serving it).
    func xclipCopy(_ text: String, on host: String, display: String) throws {
        let result = try lab.exec(host, ["sh", "-c", "printf '%s' \"$1\" | DISPLAY=\(display) xclip -selection clipboard -i", "copy", text])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// `host`'s X clipboard as text, or nil when it has no owner.
    func xclipPaste(on host: String, display: String) throws -> String? {
        let result = try lab.exec(host, ["env", "DISPLAY=\(display)", "xclip", "-selection", "clipboard", "-o"])
        return result.status == 0 ? result.stdout : nil
    }

    /// The clipboard items `host`'s agent holds (its own copies).
    func heldItems(on host: String) throws -> [[String: Any]] {
        let status = try JSONSerialization.jsonObject(with: Data(try lab.handoff(host, "status", "--json").stdout.utf8)) as? [String: Any]
        return ((status?["activities"] as? [[String: Any]]) ?? []).filter { $0["activityType"] as? String == "org.handoff.clipboard" }
    }

    func testTextCopiedOnOneDisplayAppearsOnThePairedOneAndIsNotSentBack() throws {
        let d1 = try startDisplay(on: "h1")
        let d2 = try startDisplay(on: "h2")
        let config: [String: Any] = ["clipboard": ["sync": true, "syncMaxBytes": 1000]]
        try lab.startAgent("h1", config: config, environment: ["DISPLAY": d1])
        try lab.startAgent("h2", config: config, environment: ["DISPLAY": d2])
        try lab.pair("h1", "h2")
        // What is on a clipboard at an agent's first look is not offered: copy only after it.
        for host in ["h1", "h2"] {
            try lab.waitUntil("\(host)'s agent watching its desktop clipboard", timeout: 5) {
                lab.logLines("\(try lab.path(host))/handoffd.log").contains { $0.contains("clipboard.sync: watching the desktop clipboard") }
            }
        }

        let text = "copied on h1 at \(Date().timeIntervalSince1970)"
        try xclipCopy(text, on: "h1", display: d1)
        let took: TimeInterval
        do {
            took = try lab.waitUntil("h1's copy in h2's clipboard", timeout: 8) { try xclipPaste(on: "h2", display: d2) == text }
        } catch {
            for host in ["h1", "h2"] {
                let log = lab.logLines("\(try lab.path(host))/handoffd.log").filter { $0.contains("clipboard") }.suffix(15)
                print("\(host)'s agent log:\n" + log.joined(separator: "\n"))
            }
            throw error
        }
        print("clipboard.sync h1 -> h2: \(String(format: "%.2f", took)) s")
        XCTAssertEqual(try heldItems(on: "h1").count, 1)
        // Not echoed: h2 put it on its clipboard, and offers nothing (over a few polls).
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(try heldItems(on: "h2").count, 0, "h2 offered back what it put")
        XCTAssertEqual(try xclipPaste(on: "h1", display: d1), text)

        // The other way.
        let reply = "copied on h2 at \(Date().timeIntervalSince1970)"
        try xclipCopy(reply, on: "h2", display: d2)
        try lab.waitUntil("h2's copy in h1's clipboard", timeout: 8) { try xclipPaste(on: "h1", display: d1) == reply }

        // Over clipboard.syncMaxBytes (1000 bytes): not put on h2's clipboard, but `handoff paste` gets it.
        let large = String(repeating: "x", count: 3000)
        try xclipCopy(large, on: "h1", display: d1)
        try lab.waitUntil("h1's large item offered", timeout: 5) {
            try heldItems(on: "h1").contains { ($0["title"] as? String)?.contains("3000 bytes") == true }
        }
        try lab.waitUntil("h2 pastes the large item", timeout: 5) { try lab.handoff("h2", "paste", "--from", "h1").stdout == large }
        XCTAssertEqual(try xclipPaste(on: "h2", display: d2), reply, "the large item did not replace h2's clipboard")
    }
}

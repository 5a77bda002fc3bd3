import Foundation
import XCTest

/// The Universal Clipboard (issue 19, item 2) on three simulated hosts: h1 and h2 are paired, h2
/// and h3 are paired, h1 and h3 are not. `handoff copy` on one host and `handoff paste` on a
/// paired one give back the same bytes (SHA-256), at 0 B, 1 B, 3 KB and 50 MiB; `--from` picks
/// the device; an item is gone after `clipboard.expiry` (5 s on h3); a host that is not paired
/// with the copier pastes nothing.
final class ClipboardOnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }

    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1")
        try lab.startAgent("h2")
        try lab.startAgent("h3", config: ["clipboard": ["expiry": 5, "maxBytes": 1_048_576]])
        try lab.pair("h1", "h2")
        try lab.pair("h2", "h3")
    }

    /// `count` random bytes in a new file on `host`; returns its path and SHA-256.
    func randomFile(on host: String, count: Int) throws -> (path: String, sha256: String) {
        let path = "\(try lab.path(host))/clip-\(UUID().uuidString.prefix(8))"
        let made = try lab.exec(host, ["sh", "-c", "head -c \(count) /dev/urandom > '\(path)'"])
        XCTAssertEqual(made.status, 0, made.stderr)
        return (path, try sha256(path))
    }

    func sha256(_ path: String) throws -> String {
        let result = try lab.run(["sha256sum", path])
        return String(result.stdout.prefix(64))
    }

    /// `handoff copy --json` on `host` with `path` as standard input (or as the argument).
    @discardableResult
    func copy(_ host: String, _ path: String, asArgument: Bool = false, type: String? = nil) throws -> [String: Any] {
        let typeOption = type.map { " --type '\($0)'" } ?? ""
        let command = asArgument ? "'\(lab.handoffCLI)' copy --json\(typeOption) '\(path)'" : "'\(lab.handoffCLI)' copy --json\(typeOption) < '\(path)'"
        let result = try lab.exec(host, ["sh", "-c", command])
        XCTAssertEqual(result.status, 0, "copy on \(host): \(result.stderr)\(result.stdout)")
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// `handoff paste` on `host` into a new file; the result and the file's path.
    func paste(_ host: String, from: String? = nil) throws -> (result: CommandResult, path: String) {
        let out = "\(try lab.path(host))/pasted-\(UUID().uuidString.prefix(8))"
        let fromOption = from.map { " --from '\($0)'" } ?? ""
        return (try lab.exec(host, ["sh", "-c", "'\(lab.handoffCLI)' paste\(fromOption) > '\(out)'"]), out)
    }

    /// Pastes on `host` until the item with `sha256` arrives (the copy's advertisement takes a
    /// moment to reach it); returns how long that took.
    @discardableResult
    func pasteUntil(_ sha256: String, on host: String, from: String? = nil, timeout: TimeInterval = 10) throws -> TimeInterval {
        var last = ""
        do {
            return try lab.waitUntil("the item \(sha256.prefix(12)) pasted on \(host)", timeout: timeout) {
                let (result, path) = try paste(host, from: from)
                defer { try? FileManager.default.removeItem(atPath: path) }
                last = "\(result.status) \(result.stderr)"
                return try result.status == 0 && self.sha256(path) == sha256
            }
        } catch {
            XCTFail("last paste: \(last)")
            throw error
        }
    }

    func testCopyPasteIsByteExactAtZeroOneAnd3KBytes() throws {
        for (count, asArgument) in [(0, false), (1, true), (3 * 1024, false)] {
            let (path, sha) = try randomFile(on: "h1", count: count)
            let answer = try copy("h1", path, asArgument: asArgument, type: "application/octet-stream")
            XCTAssertEqual(answer["size"] as? Int, count, "\(answer)")
            XCTAssertEqual(answer["sha256"] as? String, sha, "\(answer)")
            try pasteUntil(sha, on: "h2", from: "h1")
        }
        // One item per device: the spool holds only the newest item's bytes, readable by the agent's user only.
        let spool = "\(try lab.path("h1"))/state/clipboard"
        let files = try FileManager.default.contentsOfDirectory(atPath: spool)
        XCTAssertEqual(files.count, 1, "\(files)")
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: "\(spool)/\(files[0])")[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o600)
        // The default type is text/plain; the item is not an activity h2 lists.
        let text = "\(try lab.path("h1"))/text"
        try "hello, clipboard\n".write(toFile: text, atomically: true, encoding: .utf8)
        XCTAssertEqual(try copy("h1", text)["type"] as? String, "text/plain")
        XCTAssertTrue(try lab.offered(on: "h2").isEmpty)
    }

    func testFiftyMebibytesArriveByteExact() throws {
        let (path, sha) = try randomFile(on: "h1", count: 50 * 1024 * 1024)
        let start = Date()
        try copy("h1", path)
        let copied = Date().timeIntervalSince(start)
        let pasted = try pasteUntil(sha, on: "h2", from: "h1", timeout: 20)
        print("clipboard 50 MiB: copy \(String(format: "%.2f", copied)) s, paste (with waiting for the advertisement) \(String(format: "%.2f", pasted)) s")
    }

    func testFromPicksTheDevice() throws {
        let (a, shaA) = try randomFile(on: "h1", count: 100)
        let (b, shaB) = try randomFile(on: "h3", count: 200)
        try copy("h1", a)
        try pasteUntil(shaA, on: "h2", from: "h1")
        try copy("h3", b)
        // The newest item is h3's; --from h1 still gives h1's.
        try pasteUntil(shaB, on: "h2", timeout: 4)
        try pasteUntil(shaA, on: "h2", from: "h1", timeout: 2)
        try pasteUntil(shaB, on: "h2", from: "h3", timeout: 2)
    }

    func testAnExpiredItemIsGone() throws {
        let (path, sha) = try randomFile(on: "h3", count: 500)
        try copy("h3", path)
        try pasteUntil(sha, on: "h2", from: "h3", timeout: 4)
        // clipboard.expiry is 5 s on h3: then h3 refuses the item, withdraws it from its
        // advertisement and deletes its bytes.
        try lab.waitUntil("h3's item withdrawn", timeout: 8) { try paste("h2", from: "h3").result.stderr.contains("no clipboard item") }
        let (result, out) = try paste("h2", from: "h3")
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("no clipboard item from h3 in the last two minutes; run `handoff copy` on h3"), result.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)).count, 0, "nothing written")
        try lab.waitUntil("h3's spool emptied", timeout: 2) {
            try FileManager.default.contentsOfDirectory(atPath: "\(try lab.path("h3"))/state/clipboard").isEmpty
        }
    }

    func testAHostNotPairedWithTheCopierPastesNothing() throws {
        let (path, sha) = try randomFile(on: "h1", count: 64)
        try copy("h1", path)
        try pasteUntil(sha, on: "h2", from: "h1")
        // h3 is not paired with h1: it cannot read h1's advertisement, and pastes nothing.
        let (result, out) = try paste("h3")
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("no clipboard item from a paired device in the last two minutes; run `handoff copy` on the other host"),
                      result.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)).count, 0, "nothing written")
        let named = try paste("h3", from: "h1").result
        XCTAssertEqual(named.status, 1)
        XCTAssertTrue(named.stderr.contains("4609") && named.stderr.contains("no paired device named h1"), named.stderr)

        // Errors that say what to do: too large for clipboard.maxBytes (1 MiB on h3), and the reserved type.
        let (large, _) = try randomFile(on: "h3", count: 2 * 1024 * 1024)
        let refused = try lab.exec("h3", ["sh", "-c", "'\(lab.handoffCLI)' copy < '\(large)'"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("4611") && refused.stderr.contains("clipboard.maxBytes"), refused.stderr)
        let reserved = try lab.handoff("h3", "publish", "--type", "org.handoff.clipboard")
        XCTAssertEqual(reserved.status, 1)
        XCTAssertTrue(reserved.stderr.contains("reserved for the clipboard"), reserved.stderr)
    }
}

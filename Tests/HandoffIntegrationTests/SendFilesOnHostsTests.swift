import Foundation
import HandoffTrust
import XCTest

/// `handoff send` (issue 19, item 3) between simulated hosts: files, a folder tree and standard
/// input arrive SHA-256 exact in the receiver's download directory; a send killed halfway leaves
/// no visible file and the next send resumes; names with `..` or absolute stay inside; a full
/// disk, `receive.enabled: false` and an unpaired device are refused with a clear error.
///
/// h1 sends. h2 receives into `<h2>/Downloads`; h3 into a 1 MiB tmpfs. h1 is paired with both,
/// h2 and h3 are not paired with each other.
final class SendFilesOnHostsTests: LabTestCase {
    override class var hostCount: Int { 3 }

    static func smallDisk(_ lab: LabDriver) throws -> String { "\(try lab.path("h3"))/small-disk" }

    override class func prepare(_ lab: LabDriver) throws {
        let small = try smallDisk(lab)
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        // In h3's mount namespace (scripts/lab's anchor), where its agent runs.
        let mounted = try lab.exec("h3", ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", small])
        guard mounted.status == 0 else { throw LabError("cannot mount a tmpfs: \(mounted.stderr)") }
        try lab.startAgent("h1")
        try lab.startAgent("h2", config: ["receive": ["directory": "\(try lab.path("h2"))/Downloads"]])
        try lab.startAgent("h3", config: ["receive": ["directory": small]])
        try lab.pair("h1", "h2")
        try lab.pair("h1", "h3")
        try lab.waitUntil("h1 sees h2 and h3", timeout: 10) {
            let peers = try lab.handoff("h1", "peers").stdout
            return peers.contains("h2") && peers.contains("h3")
        }
    }

    override class func tearDown() {
        if labIsReady, let small = try? smallDisk(lab) {
            try? lab.stopAgent("h3")
            _ = try? lab.exec("h3", ["umount", small])
        }
        super.tearDown()
    }

    var downloads: String { get throws { "\(try lab.path("h2"))/Downloads" } }

    /// Random bytes written to a file under h1's directory.
    func makeFile(_ relative: String, bytes: Int) throws -> String {
        let path = "\(try lab.path("h1"))/outbox/\(relative)"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let random = try XCTUnwrap(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? random.close() }
        try random.readData(ofLength: bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func sha256(_ path: String) throws -> String {
        var digest = ContentDigest()
        digest.update(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        return digest.hex()
    }

    /// The JSON lines of a `--json` run.
    func jsonLines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The visible entries (not `.handoff-partial`) of a directory.
    func visible(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    func testAFileAFolderTreeAndStandardInputArriveExact() throws {
        let watch = try startWatch("send-watch")
        let file = try makeFile("exact/report.bin", bytes: 3 * 1024 * 1024 + 17)
        let tree = "\(try lab.path("h1"))/outbox/tree"
        let inTree = try ["a.txt", "sub/b.bin", "sub/deeper/c.bin", "sub/empty.txt"].map { ($0, try makeFile("tree/\($0)", bytes: $0.hasPrefix("sub/empty") ? 0 : 70_000)) }
        let sent = try lab.handoff("h1", "send", "--to", "h2", "--json", file, tree)
        XCTAssertEqual(sent.status, 0, sent.stdout + sent.stderr)
        let done = try XCTUnwrap(jsonLines(sent.stdout).last { $0["event"] as? String == "done" }, sent.stdout)
        XCTAssertEqual(done["files"] as? Int, 5)
        XCTAssertEqual(try sha256("\(try downloads)/report.bin"), try sha256(file))
        for (relative, source) in inTree {
            XCTAssertEqual(try sha256("\(try downloads)/tree/\(relative)"), try sha256(source), relative)
        }
        let event = try waitForEvent(watch.log, "filesReceived").event
        XCTAssertEqual(event["summary"] as? String, "5 files from h1, 3.2 MiB")

        // The same file again: a new name, never an overwrite.
        let again = try lab.handoff("h1", "send", "--to", "h2", file)
        XCTAssertEqual(again.status, 0, again.stdout + again.stderr)
        XCTAssertEqual(try sha256("\(try downloads)/report (2).bin"), try sha256(file))

        // Standard input: no size or hash up front.
        let input = try makeFile("stdin.bin", bytes: 1_000_001)
        let piped = try lab.exec("h1", ["sh", "-c", "'\(lab.handoffCLI)' send --to h2 --name piped.bin - < '\(input)'"])
        XCTAssertEqual(piped.status, 0, piped.stdout + piped.stderr)
        XCTAssertEqual(try sha256("\(try downloads)/piped.bin"), try sha256(input))
    }

    func testAKilledSendLeavesNoFileAndTheNextSendResumes() throws {
        let size = 24 * 1024 * 1024
        let file = try makeFile("resume/big.bin", bytes: size)
        // h1's agent relays no more than 4 MiB of the CLI's data: the send hangs there.
        XCTAssertEqual(try lab.handoff("h1", "fault", "set", "stallStreamAfterBytes=4194304").status, 0)
        defer { _ = try? lab.handoff("h1", "fault", "clear") }
        let (log, pid) = try lab.startLogged("h1", [lab.handoffCLI, "send", "--to", "h2", "--json", file], log: "send-killed")
        let partials = "\(try downloads)/.handoff-partial"
        func partialBytes() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: partials)) ?? []).reduce(0) { total, name in
                total + (((try? FileManager.default.attributesOfItem(atPath: "\(partials)/\(name)"))?[.size] as? Int) ?? 0)
            }
        }
        try lab.waitUntil("4 MiB in h2's partial file", timeout: 10) { partialBytes() >= 4 * 1024 * 1024 - 64 * 1024 }
        let h2Log = "\(try lab.path("h2"))/handoffd.log"
        let mark = lab.logLines(h2Log).count
        kill(pid, SIGKILL)
        try lab.waitUntil("h2 sees the send break", timeout: 5) {
            lab.logLines(h2Log).dropFirst(mark).contains { $0.contains("file received") && $0.contains("h1") }
        }
        let shown = visible(try downloads)
        XCTAssertFalse(shown.contains { $0.hasPrefix("big") }, "no visible file after the kill: \(shown)")
        let kept = partialBytes()
        XCTAssertGreaterThan(kept, 0, lab.logLines(log).joined(separator: "\n"))

        _ = try lab.handoff("h1", "fault", "clear")
        let resumed = try lab.handoff("h1", "send", "--to", "h2", "--json", file)
        XCTAssertEqual(resumed.status, 0, resumed.stdout + resumed.stderr)
        let events = jsonLines(resumed.stdout)
        let received = try XCTUnwrap(events.first { $0["event"] as? String == "file" }, resumed.stdout)
        XCTAssertGreaterThan(received["start"] as? Int ?? 0, 0, "the second send starts after what arrived: \(received)")
        let done = try XCTUnwrap(events.first { $0["event"] as? String == "done" })
        XCTAssertLessThan(done["sent"] as? Int ?? size, size, "fewer bytes went the second time: \(done)")
        XCTAssertEqual(try sha256("\(try downloads)/big.bin"), try sha256(file))
        XCTAssertEqual(partialBytes(), 0, "the partial file is gone once the file is complete")
    }

    /// The offer names each file's partial copy by a key from its size, modification time and
    /// inode, not its contents: a file rewritten after a broken send starts again from byte 0
    /// rather than continue the copy of its old bytes.
    func testAChangedFileNeverContinuesItsOldPartialCopy() throws {
        let size = 8 * 1024 * 1024
        let file = try makeFile("changed/edit.bin", bytes: size)
        XCTAssertEqual(try lab.handoff("h1", "fault", "set", "stallStreamAfterBytes=2097152").status, 0)
        defer { _ = try? lab.handoff("h1", "fault", "clear") }
        let h2Log = "\(try lab.path("h2"))/handoffd.log"
        let mark = lab.logLines(h2Log).count
        let partials = "\(try downloads)/.handoff-partial"
        func names() -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: partials)) ?? []) }
        let earlier = names()
        let (_, pid) = try lab.startLogged("h1", [lab.handoffCLI, "send", "--to", "h2", "--json", file], log: "send-changed")
        try lab.waitUntil("1 MiB of edit.bin in a partial file on h2", timeout: 10) {
            names().subtracting(earlier).contains { name in
                (((try? FileManager.default.attributesOfItem(atPath: "\(partials)/\(name)"))?[.size] as? Int) ?? 0) >= 1024 * 1024
            }
        }
        kill(pid, SIGKILL)
        try lab.waitUntil("h2 sees the send break", timeout: 5) {
            lab.logLines(h2Log).dropFirst(mark).contains { $0.contains("file received") && $0.contains("h1") }
        }
        // Rewritten in place, same size, other bytes, a second later.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: file))
        let random = try XCTUnwrap(FileHandle(forReadingAtPath: "/dev/urandom"))
        try handle.write(contentsOf: random.readData(ofLength: size))
        try handle.close()
        try random.close()
        var info = stat()
        XCTAssertEqual(stat(file, &info), 0)
        var times = [timespec(tv_sec: info.st_mtim.tv_sec + 1, tv_nsec: 0), timespec(tv_sec: info.st_mtim.tv_sec + 1, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, file, &times, 0), 0)

        _ = try lab.handoff("h1", "fault", "clear")
        let again = try lab.handoff("h1", "send", "--to", "h2", "--json", file)
        XCTAssertEqual(again.status, 0, again.stdout + again.stderr)
        let received = try XCTUnwrap(jsonLines(again.stdout).first { $0["event"] as? String == "file" }, again.stdout)
        XCTAssertEqual(received["start"] as? Int, 0, "a changed file starts from byte 0: \(received)")
        XCTAssertEqual(try sha256("\(try downloads)/\(try XCTUnwrap(received["name"] as? String))"), try sha256(file))
        // The old contents' partial copy is left to the 24-hour sweep, as any abandoned one; the
        // other tests count partial files, so it goes now.
        for name in names().subtracting(earlier) { try? FileManager.default.removeItem(atPath: "\(partials)/\(name)") }
    }

    func testNamesWithDotsOrAbsoluteStayInsideTheDownloadDirectory() throws {
        let input = try makeFile("names.bin", bytes: 1000)
        for name in ["../escaped.bin", "/etc/absolute.bin", "a/../../up.bin"] {
            let sent = try lab.exec("h1", ["sh", "-c", "'\(lab.handoffCLI)' send --to h2 --json --name '\(name)' - < '\(input)'"])
            XCTAssertEqual(sent.status, 0, sent.stdout + sent.stderr)
            let landed = try XCTUnwrap(jsonLines(sent.stdout).first { $0["event"] as? String == "file" }?["name"] as? String, sent.stdout)
            XCTAssertFalse(landed.contains(".."), landed)
            XCTAssertFalse(landed.hasPrefix("/"), landed)
            XCTAssertEqual(try sha256("\(try downloads)/\(landed)"), try sha256(input), landed)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(try lab.path("h2"))/escaped.bin"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/etc/absolute.bin"))
    }

    func testAFullDiskReceiveOffAndAnUnpairedDeviceAreRefused() throws {
        let small = try Self.smallDisk(lab)
        let big = try makeFile("full/two-mib.bin", bytes: 2 * 1024 * 1024)
        let refused = try lab.handoff("h1", "send", "--to", "h3", big)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("free"), refused.stderr)
        // Standard input has no size up front: the disk fills while it is written.
        let piped = try lab.exec("h1", ["sh", "-c", "'\(lab.handoffCLI)' send --to h3 - < '\(big)'"])
        XCTAssertEqual(piped.status, 1)
        XCTAssertTrue(piped.stderr.contains("No space left"), piped.stderr)
        XCTAssertEqual(visible(small), [], "no file on the full disk")
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: "\(small)/.handoff-partial")) ?? [], [], "no partial file either")

        // receive.enabled false (a reload): refused.
        let dir = try lab.path("h3")
        let configFile = "\(dir)/test-config.json"
        let original = try Data(contentsOf: URL(fileURLWithPath: configFile))
        var config = try XCTUnwrap(JSONSerialization.jsonObject(with: original) as? [String: Any])
        config["receive"] = ["directory": small, "enabled": false]
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configFile))
        defer {
            try? original.write(to: URL(fileURLWithPath: configFile))
            try? reload("h3")
        }
        try reload("h3")
        let off = try lab.handoff("h1", "send", "--to", "h3", try makeFile("off.txt", bytes: 10))
        XCTAssertEqual(off.status, 1)
        XCTAssertTrue(off.stderr.contains("receive.enabled"), off.stderr)

        // h2 and h3 are not paired.
        let unpaired = try lab.handoff("h2", "send", "--to", "h3", try makeFile("unpaired.txt", bytes: 10))
        XCTAssertEqual(unpaired.status, 1)
        XCTAssertTrue(unpaired.stderr.contains("paired"), unpaired.stderr)
    }

    /// SIGHUP to a host's agent; waits until it has reloaded.
    func reload(_ host: String) throws {
        let dir = try lab.path(host)
        let log = "\(dir)/handoffd.log"
        let before = lab.logLines(log).count
        let pid = try String(contentsOfFile: "\(dir)/handoffd.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(kill(try XCTUnwrap(Int32(pid)), SIGHUP), 0)
        try lab.waitUntil("\(host) reloaded", timeout: 5) { lab.logLines(log).dropFirst(before).contains { $0.contains("configuration reloaded") } }
    }
}

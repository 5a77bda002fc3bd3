import Foundation
import XCTest

/// The notes example on simulated hosts, and an attachment on continuation streams between its
/// editor on h1 and its viewer on h2 (HandoffKitOnHostsTests, HostFaultsOnHostsTests,
/// IPv6OnHostsTests, AddressedPeersOnHostsTests).
extension LabTestCase {
    /// The notes example app (Examples/notes), next to the executables.
    var notes: String { lab.binDirectory.appendingPathComponent("notes-example").path }

    /// Starts `notes-example ARGS...` on a host in the background (stopped at tear-down); returns its log.
    func app(_ host: String, _ args: [String], log name: String) throws -> String {
        try startLogged(host, [notes] + args, log: name)
    }

    /// Starts the editor on `host` and returns the activity ID once `peer` lists it.
    func editNote(on host: String, listedOn peer: String, _ extra: [String] = []) throws -> (id: String, log: String) {
        let log = try app(host, ["edit", "--title", "Shopping list", "--text", "milk, eggs"] + extra, log: "editor-\(UUID().uuidString.prefix(6))")
        try lab.waitForLine(log, "editing")
        let line = lab.logLines(log).first { $0.hasPrefix("editing") }!
        let id = String(line.split(separator: " ").first { $0.count == 36 }!)
        try lab.waitUntilListed(id, on: peer)
        return (id, log)
    }

    /// Starts a viewer on h2 that reads attachments, and an editor on h1 whose activity carries
    /// `bytes` on continuation streams; continues it on h2. Returns both apps' logs.
    func continueAttachment(bytes: Int, label: String, listTimeout: TimeInterval = 10) throws -> (viewer: String, editor: String) {
        let viewer = try app("h2", ["open", "--read-streams", "--once"], log: "\(label)-viewer")
        try lab.waitForLine(viewer, "ready", timeout: 10)
        let editor = try app("h1", ["edit", "--title", label, "--text", "x", "--stream-bytes", "\(bytes)"], log: "\(label)-editor")
        try lab.waitForLine(editor, "editing", timeout: 10)
        let id = try XCTUnwrap(lab.logLines(editor).first { $0.hasPrefix("editing") }?.split(separator: " ").first { $0.count == 36 }.map(String.init))
        try lab.waitUntilListed(id, on: "h2", timeout: listTimeout)
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").status, 0)
        return (viewer, editor)
    }

    /// Waits for the viewer to receive the attachment and checks it is whole: `bytes` long, with
    /// the SHA-256 the editor sent. Returns the viewer's line.
    @discardableResult
    func assertAttachmentWhole(_ apps: (viewer: String, editor: String), bytes: Int, timeout: TimeInterval) throws -> String {
        try lab.waitForLine(apps.viewer, "received", timeout: timeout)
        try lab.waitForLine(apps.editor, "sent", timeout: 10)
        let received = lab.logLines(apps.viewer).first { $0.hasPrefix("received") } ?? ""
        let sent = lab.logLines(apps.editor).first { $0.hasPrefix("sent") } ?? ""
        XCTAssertTrue(received.hasPrefix("received \(bytes) bytes"), received)
        XCTAssertEqual(received.split(separator: " ").dropFirst(3).first, sent.split(separator: " ").dropFirst(3).first, "the same SHA-256 on both sides")
        return received
    }
}

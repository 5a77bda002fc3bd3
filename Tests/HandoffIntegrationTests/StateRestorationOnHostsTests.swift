import Foundation
import XCTest

/// HandoffKit's state restoration on simulated hosts: the notes example (`open --restore-state`)
/// shows the last note again after it was stopped with SIGTERM and started anew.
final class StateRestorationOnHostsTests: LabTestCase {
    override class var hostCount: Int { 2 }

    override class func prepare(_ lab: LabDriver) throws {
        try lab.startAgent("h1")
        try lab.startAgent("h2")
        try lab.pair("h1", "h2")
    }

    func testTheExampleRestoresTheLastNoteAfterItIsKilledAndRelaunched() throws {
        let state = "\(try lab.path("h2"))/state-\(UUID().uuidString.prefix(6))"
        let viewer = ["env", "XDG_STATE_HOME=\(state)", notes, "open", "--restore-state"]
        let (first, pid) = try lab.startLogged("h2", viewer, log: "restoring-first")
        started.append(pid)
        try lab.waitForLine(first, "ready", timeout: 10)
        let (id, _) = try editNote(on: "h1", listedOn: "h2")
        XCTAssertEqual(try lab.continueActivity(id, on: "h2").status, 0)
        try lab.waitForLine(first, "didUpdate")

        kill(pid, SIGTERM)  // run() ends and saves the state
        let file = "\(state)/handoff/apps/com.example.notes/restoration.plist"
        try lab.waitUntil("\(file)", timeout: 5) { FileManager.default.fileExists(atPath: file) }
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)

        let second = try startLogged("h2", viewer, log: "restoring-second")
        try lab.waitForLine(second, "decodeRestorableState: the last note, \"Shopping list\": milk, eggs", timeout: 10)
    }
}

import Foundation

/// The notes example (Examples/NotesEditor), a HandoffKit app, run on simulated hosts.
extension LabTestCase {
    /// The notes-example executable.
    var notesExample: String { lab.binDirectory.appendingPathComponent("notes-example").path }

    /// Starts `notes-example ARGS...` on a host in the background (stopped at tear-down); returns its log.
    func startNotes(_ host: String, _ args: [String], log name: String) throws -> String {
        try startLogged(host, [notesExample] + args, log: name)
    }

    /// Starts the editor on `host` and returns the activity ID once `peer` lists it.
    func editNote(on host: String, listedOn peer: String, _ extra: [String] = []) throws -> (id: String, log: String) {
        let log = try startNotes(host, ["edit", "--title", "Shopping list", "--text", "milk, eggs"] + extra, log: "editor-\(UUID().uuidString.prefix(6))")
        try lab.waitForLine(log, "editing")
        let line = lab.logLines(log).first { $0.hasPrefix("editing") }!
        let id = String(line.split(separator: " ").first { $0.count == 36 }!)
        try lab.waitUntilListed(id, on: peer)
        return (id, log)
    }
}

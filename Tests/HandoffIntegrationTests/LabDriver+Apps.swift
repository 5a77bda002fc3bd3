import Foundation

extension LabDriver {
    /// Starts a program on a host in the background, its output in `<host dir>/<name>.log`;
    /// returns the log's path and the PID.
    func startLogged(_ host: String, _ argv: [String], log name: String) throws -> (log: String, pid: Int32) {
        let log = "\(try path(host))/\(name).log"
        return (log, try startBackground(host, argv, log: log))
    }

    /// The lines an app (or any background program) has written to its log so far.
    func logLines(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Waits until a line of `log` starts with `prefix`.
    func waitForLine(_ log: String, _ prefix: String, timeout: TimeInterval = 5) throws {
        try waitUntil("\"\(prefix)\" in \(log)", timeout: timeout) { logLines(log).contains { $0.hasPrefix(prefix) } }
    }
}

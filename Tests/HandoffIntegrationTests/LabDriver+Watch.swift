import Foundation

/// Reading what a background `handoff watch --json` wrote (``LabDriver/startLogged(_:_:log:)``).
extension LabDriver {
    /// The JSON events a background `handoff watch --json` wrote so far.
    func watchEvents(_ log: String) -> [[String: Any]] {
        logLines(log).compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits for an event named `name` (matching `where`) in the watch's log; returns it and when it was seen.
    @discardableResult
    func waitForEvent(_ log: String, _ name: String, timeout: TimeInterval = 5,
                      where matches: ([String: Any]) -> Bool = { _ in true }) throws -> (event: [String: Any], seenAt: Date) {
        var found: [String: Any]?
        try waitUntil("\(name) in \(log)", timeout: timeout) {
            found = watchEvents(log).first { $0["event"] as? String == name && matches($0) }
            return found != nil
        }
        return (found!, Date())
    }
}

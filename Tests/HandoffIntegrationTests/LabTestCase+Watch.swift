import Foundation
import XCTest

/// Following `handoff watch --json` on a host (WatchOnHostsTests, IPv6OnHostsTests, AddressedPeersOnHostsTests).
extension LabTestCase {
    /// The JSON events a background `handoff watch --json` wrote so far.
    func events(_ log: String) -> [[String: Any]] {
        lab.logLines(log).compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits for an event named `name` (matching `where`) in the watch's log; returns it and when it was seen.
    @discardableResult
    func waitForEvent(_ log: String, _ name: String, timeout: TimeInterval = 5,
                      where matches: ([String: Any]) -> Bool = { _ in true }) throws -> (event: [String: Any], seenAt: Date) {
        var found: [String: Any]?
        try lab.waitUntil("\(name) in \(log)", timeout: timeout) {
            found = events(log).first { $0["event"] as? String == name && matches($0) }
            return found != nil
        }
        return (found!, Date())
    }

    /// Starts `handoff watch --json` on h2 and waits until it is in place (h2's own pause and
    /// resume show in it).
    ///
    /// Each try pauses and, when the watch did not see it, resumes again: pausing a paused agent
    /// changes nothing and tells no one, so a pause made before the watch subscribed would
    /// otherwise never show.
    func startWatch(_ name: String) throws -> (log: String, pid: Int32) {
        let watch = try lab.startLogged("h2", [lab.handoffCLI, "watch", "--json"], log: name)
        try lab.waitUntil("the watch on h2 sees h2's own pause", timeout: 10) {
            try lab.handoff("h2", "pause")
            let seen = events(watch.log).contains { $0["event"] as? String == "paused" }
            if !seen { try lab.handoff("h2", "resume") }
            return seen
        }
        try lab.handoff("h2", "resume")
        try waitForEvent(watch.log, "resumed")
        return watch
    }
}

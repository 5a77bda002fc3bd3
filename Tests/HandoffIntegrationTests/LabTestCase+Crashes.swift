import Foundation
import XCTest

/// An agent that crashes fails the test during which it crashed, with the Swift runtime's report
/// (the crashed thread's frames), instead of leaving the test to time out waiting for it.
extension LabTestCase {
    /// Crash reports already charged to a test, by agent log (each is charged once).
    nonisolated(unsafe) private static var reportedCrashes: [String: Int] = [:]

    /// The line with which the Swift runtime's backtracer starts a crash report.
    static let crashMarker = "*** Program crashed:"

    /// Fails this test once for each new crash report in any host's agent log.
    func failForAgentCrashes() {
        guard Self.labIsReady else { return }
        for index in 1...Self.hostCount {
            let host = "h\(index)"
            guard let directory = try? lab.path(host) else { continue }
            let log = "\(directory)/handoffd.log"
            let lines = lab.logLines(log)
            let starts = lines.indices.filter { lines[$0].hasPrefix(Self.crashMarker) }
            let reported = Self.reportedCrashes[log, default: 0]
            guard starts.count > reported else { continue }
            Self.reportedCrashes[log] = starts.count
            for start in starts[reported...] {
                // The report: the marker, then the crashed thread's frames (the thread that says "crashed:").
                let crashed = lines[start...].firstIndex { $0.hasSuffix("crashed:") } ?? start
                let frames = lines[crashed...].prefix(14).joined(separator: "\n")
                XCTFail("handoffd on \(host) crashed during this test (\(log)):\n\(lines[start])\n\(frames)")
            }
        }
    }
}

import Foundation
import XCTest

/// A `handoff pair` run in the background on a simulated host, its answers fed through a FIFO.
struct PairRun {
    let host: String
    let input: String
    let output: String
}

/// Driving `handoff pair` as a person would: start it, read the code it shows, answer it.
extension LabTestCase {
    func startPair(on host: String, _ args: [String]) throws -> PairRun {
        let dir = try lab.path(host)
        let tag = UUID().uuidString.prefix(6)
        let input = "\(dir)/pair-\(tag).in"
        let output = "\(dir)/pair-\(tag).out"
        XCTAssertEqual(mkfifo(input, 0o600), 0)
        // 0<> opens the FIFO read-write, so the CLI starts without waiting for a writer.
        let command = ([lab.handoffCLI, "pair"] + args).map { "'\($0)'" }.joined(separator: " ")
        _ = try lab.exec(host, ["sh", "-c", "\(command) 0<> '\(input)' > '\(output)' 2>&1 & echo $! > '\(output).pid'"])
        return PairRun(host: host, input: input, output: output)
    }

    func text(_ run: PairRun) -> String { (try? String(contentsOfFile: run.output, encoding: .utf8)) ?? "" }

    func code(_ run: PairRun) throws -> String {
        // A line that starts with the code: a peer's name may hold the words "code: " too.
        try lab.waitUntil("a code from \(run.host)", timeout: 10) { text(run).split(separator: "\n").contains { $0.hasPrefix("code: ") } }
        let line = text(run).split(separator: "\n").first { $0.hasPrefix("code: ") }!
        return String(line.dropFirst("code: ".count))
    }

    func answer(_ run: PairRun, _ reply: String) throws {
        try lab.exec(run.host, ["sh", "-c", "echo \(reply) > '\(run.input)'"])
    }

    func finished(_ run: PairRun, containing expected: String) throws {
        try lab.waitUntil("\(run.host)'s pair to finish", timeout: 10) { text(run).contains(expected) }
    }

}

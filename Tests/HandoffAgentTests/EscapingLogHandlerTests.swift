import HandoffAgent
import HandoffCore
import Logging
import Synchronization
import Testing

/// Collects what reaches it, as the standard-error handler would write it.
private struct CollectingHandler: LogHandler {
    let lines: SharedLines
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.append("\(event.message) \(merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
    }
}

private final class SharedLines: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ line: String) { storage.withLock { $0.append(line) } }
    var all: [String] { storage.withLock { $0 } }
}

@Suite("Escaping log handler: a peer cannot forge a log line or draw on a terminal")
struct EscapingLogHandlerTests {
    @Test("messages, metadata of every kind and logger metadata are escaped")
    func escapesEverything() {
        let lines = SharedLines()
        var logger = Logger(label: "test") { _ in EscapingLogHandler(CollectingHandler(lines: lines)) }
        logger[metadataKey: "handoff.agent"] = "h1\r\nFAKE agent line"
        let forged = "laptop\n2026-11-25T12:00:00 info handoffd: paired handoff.device=ATTACKER"
        logger.info("peer found \(forged)", metadata: [
            "handoff.peer": "\(forged)",
            "handoff.title": .string("\u{1B}[2Jtitle\u{2028}x\u{202E}"),
            "handoff.list": .array([.string("a\u{9B}b")]),
            "handoff.map": .dictionary(["k": .string("v\u{7}")]),
        ])
        let line = lines.all.joined()
        #expect(lines.all.count == 1)
        #expect(!line.unicodeScalars.contains(where: UntrustedText.mustEscape), "\(line.debugDescription)")
        #expect(line.contains(#"laptop\u{A}2026-11-25"#))
        #expect(line.contains(#"h1\u{D}\u{A}FAKE"#))
        #expect(line.contains(#"\u{1B}[2Jtitle\u{2028}x\u{202E}"#))
        #expect(line.contains(#"9B}b"#) && line.contains(#"7}"#))  // inside a container the collector escapes the backslash again
    }

    @Test("ordinary entries pass unchanged, with their level")
    func passesOrdinaryEntries() {
        let lines = SharedLines()
        var handler = EscapingLogHandler(CollectingHandler(lines: lines))
        handler.logLevel = .warning
        let logger = Logger(label: "test") { _ in handler }
        logger.info("not shown")
        logger.warning("shown", metadata: ["handoff.peer": "Élodie's laptop"])
        #expect(lines.all == ["shown handoff.peer=Élodie's laptop"])
    }
}

import Foundation
import HandoffAgent
import Logging
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Logging under journald: each line carries its syslog priority")
struct JournalLoggingTests {
    @Test("swift-log levels map to syslog priorities", arguments: [
        (Logger.Level.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
    ])
    func priorities(level: Logger.Level, priority: Int) {
        #expect(SyslogPriority.of(level) == priority)
    }

    @Test("each line starts with <N>, escaped, with its metadata, and levels below the handler's are dropped")
    func prefixedLines() {
        let lines = Mutex<[String]>([])
        var logger = Logger(label: "handoffd") { label in
            var handler = EscapingLogHandler(JournalLogHandler(label: label) { line in lines.withLock { $0.append(line) } })
            handler.logLevel = .info
            return handler
        }
        logger[metadataKey: "handoff.agent"] = "h1"
        logger.debug("not shown")
        logger.info("started")
        logger.warning("port taken", metadata: ["handoff.port": "52123"])
        logger.error("bad\nline")
        let written = lines.withLock { $0 }
        #expect(written.count == 3)
        #expect(written[0].hasPrefix("<6>") && written[0].contains("handoffd:") && written[0].contains("started"))
        #expect(written[1].hasPrefix("<4>") && written[1].contains("handoff.port=52123") && written[1].contains("handoff.agent=h1"))
        #expect(written[2].hasPrefix("<3>") && written[2].contains("bad") && written[2].contains("line"))
        #expect(written.allSatisfy { $0.hasSuffix("\n") && $0.dropLast().allSatisfy { $0 != "\n" } })
    }

    @Test("JOURNAL_STREAM counts only when it names the descriptor's device and inode")
    func journalStreamDetection() throws {
        let path = NSTemporaryDirectory() + "journal-stream-\(getpid())"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        defer { unlink(path) }
        let descriptor = open(path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var status = stat()
        try #require(fstat(descriptor, &status) == 0)
        let matching = "\(status.st_dev):\(status.st_ino)"
        #expect(JournalStream.isConnected(descriptor, environment: ["JOURNAL_STREAM": matching]))
        #expect(!JournalStream.isConnected(descriptor, environment: ["JOURNAL_STREAM": "\(status.st_dev):\(status.st_ino + 1)"]))
        #expect(!JournalStream.isConnected(descriptor, environment: ["JOURNAL_STREAM": "garbage"]))
        #expect(!JournalStream.isConnected(descriptor, environment: [:]))
    }
}

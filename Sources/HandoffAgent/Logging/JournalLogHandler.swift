import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A log handler for standard error under journald: each line is swift-log's usual stream line
/// with its syslog priority in front (`<4>… warning handoffd: …`), so journald files it at its
/// level (`journalctl -p warning` shows warnings and worse). handoffd uses it when
/// ``JournalStream`` says standard error is the journal.
public struct JournalLogHandler: LogHandler {
    /// The lines' label (`handoffd`).
    public let label: String
    /// Where whole lines go, one call per line.
    let output: @Sendable (String) -> Void

    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    /// A handler that writes to standard error, or to `output` (tests).
    public init(label: String, output: @escaping @Sendable (String) -> Void = JournalLogHandler.writeToStandardError) {
        self.label = label
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let stream = PrefixedStream(prefix: "<\(SyslogPriority.of(event.level))>", output: output)
        var handler = StreamLogHandler(label: label, stream: stream, metadataProvider: metadataProvider)
        handler.logLevel = logLevel
        handler.metadata = metadata
        handler.log(event: event)
    }

    /// Writes a line to standard error in one `write(2)`, so concurrent lines do not interleave.
    @Sendable public static func writeToStandardError(_ line: String) {
        var line = line
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// swift-log's stream with the priority prefix in front of each line.
    struct PrefixedStream: TextOutputStream, Sendable {
        let prefix: String
        let output: @Sendable (String) -> Void
        mutating func write(_ string: String) { output(prefix + string) }
    }
}

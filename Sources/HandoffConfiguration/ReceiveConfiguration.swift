import Configuration
import HandoffCore

/// `receive.*`: files other devices send here with `handoff send` (paired devices only).
public struct ReceiveConfiguration: Sendable, Equatable {
    /// `receive.enabled`: take files from paired devices (default true).
    public var enabled = true
    /// `receive.directory`: where they land; empty (the default) means the desktop's download
    /// directory (`xdg-user-dir DOWNLOAD`), else `~/Downloads`.
    public var directory = ""
    /// `receive.maxBytes`: the most bytes one send may have (default 64 GiB).
    public var maxBytes = 64 << 30

    public init() {}

    /// Reads `receive.*`; a missing key keeps its default.
    public init(reader: ConfigReader) throws(ConfigurationError) {
        enabled = reader.bool(forKey: "receive.enabled", default: enabled)
        directory = reader.string(forKey: "receive.directory", default: directory)
        maxBytes = reader.int(forKey: "receive.maxBytes", default: maxBytes)
        guard directory.isEmpty || directory.hasPrefix("/") else {
            throw ConfigurationError(key: "receive.directory", "must be an absolute path (or empty: the desktop's download directory)")
        }
        guard maxBytes >= 0 else { throw ConfigurationError(key: "receive.maxBytes", "must be 0 or more bytes (0 refuses every file)") }
    }

    /// The decision's policy.
    public var policy: FileOfferDecision.Policy { FileOfferDecision.Policy(enabled: enabled, maxBytes: maxBytes) }
}

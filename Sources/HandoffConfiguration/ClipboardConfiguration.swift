import Configuration

/// `clipboard.*`: the Universal Clipboard (`handoff copy`, `handoff paste`, and the desktop
/// clipboard with `clipboard.sync`).
public struct ClipboardConfiguration: Sendable, Equatable {
    /// `clipboard.maxBytes`: the largest item this agent offers or pastes (default 64 MiB). A
    /// larger copy is refused before it replaces the item offered now.
    public var maxBytes: Int = 64 * 1024 * 1024
    /// `clipboard.expiry`: seconds an item is offered after it was copied (default 120, Apple's
    /// two minutes).
    public var expiry: Duration = .seconds(120)
    /// `clipboard.sync`: join the desktop clipboard (X11 with xclip, Wayland with wl-clipboard):
    /// offer each new local item, and put each paired device's new item on the local clipboard
    /// (small ones at once). Off by default.
    public var sync = false
    /// `clipboard.syncMaxBytes`: with `clipboard.sync`, a paired device's item up to this size
    /// is fetched as soon as it is offered; larger ones only on `handoff paste` (default 1 MiB).
    public var syncMaxBytes: Int = 1024 * 1024

    /// The defaults.
    public init() {}

    /// Reads `clipboard.*`; a missing key keeps its default.
    public init(reader: ConfigReader) throws(ConfigurationError) {
        maxBytes = reader.int(forKey: "clipboard.maxBytes", default: maxBytes)
        sync = reader.bool(forKey: "clipboard.sync", default: sync)
        syncMaxBytes = reader.int(forKey: "clipboard.syncMaxBytes", default: syncMaxBytes)
        if let seconds = reader.double(forKey: "clipboard.expiry") {
            guard seconds >= 1, seconds <= 86400 else { throw ConfigurationError(key: "clipboard.expiry", "must be 1 to 86400 seconds, got \(seconds)") }
            expiry = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        guard maxBytes >= 0 else { throw ConfigurationError(key: "clipboard.maxBytes", "must be 0 or more bytes (0 refuses every item)") }
        guard syncMaxBytes >= 0 else { throw ConfigurationError(key: "clipboard.syncMaxBytes", "must be 0 or more bytes") }
    }

    /// The keys and their types, for the configuration file's schema.
    static let schema: [String: ConfigurationFile.ValueType] = [
        "clipboard.maxBytes": .int, "clipboard.expiry": .seconds, "clipboard.sync": .bool, "clipboard.syncMaxBytes": .int,
    ]
}

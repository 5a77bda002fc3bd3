import HandoffCore

/// What reloading handoffd's configuration (SIGHUP) changes: the running configuration compared
/// with the one just read, key by key.
///
/// A key changes live when every component reads it afresh (or is handed the new value) at its
/// next use: the handlers, `urlOpener`, `logLevel`, `notifications`, `faults`, every `limits.*`,
/// `inboxDirectory`, `appsDirectory`, `security.pairingTimeout`, `security.urlSchemes` and `receive.*`.
/// A key needs a restart when something was built from it at start and lives on: the peer
/// listener (`port`, `listenAddress`, `security.handshakeTimeout` and the connection limits
/// before authentication), the control socket (`socketPath`), the device identity and trust
/// store (`stateDirectory`), the DNS-SD registration and browse (`serviceType`), the name in the
/// certificate, the hello and the sealed advertisements (`name`), and every peer's liveness
/// schedule (`liveness.*`). Those keep their running values until handoffd restarts.
public struct ConfigurationChange: Sendable, Equatable {
    /// One key whose value differs.
    public struct Key: Sendable, Equatable, CustomStringConvertible {
        /// The key's name in the file, such as `limits.fetchTimeout`.
        public var name: String
        /// The running value, as text.
        public var old: String
        /// The value read, as text.
        public var new: String

        /// `port (52123 -> 52200)`.
        public var description: String { "\(name) (\(old) -> \(new))" }
    }

    /// The keys that change now, in the order of ``keyNames``.
    public let live: [Key]
    /// The keys that keep their running value until handoffd restarts, in the order of ``keyNames``.
    public let needingRestart: [Key]
    /// The configuration to run on: the new value of every live key, the running value of every
    /// key that needs a restart.
    public let running: AgentConfiguration

    /// Compares the running configuration `old` with `new`, just read.
    public init(from old: AgentConfiguration, to new: AgentConfiguration) {
        var live: [Key] = []
        var needingRestart: [Key] = []
        var running = new
        for entry in Self.entries() where entry.differs(old, new) {
            let key = Key(name: entry.name, old: entry.text(old), new: entry.text(new))
            if entry.isLive {
                live.append(key)
            } else {
                needingRestart.append(key)
                entry.keep(&running, old)
            }
        }
        self.live = live
        self.needingRestart = needingRestart
        self.running = running
    }

    /// Whether the two configurations are the same.
    public var isEmpty: Bool { live.isEmpty && needingRestart.isEmpty }

    /// Whether `name` (such as `faults` or `limits.fetchTimeout`) changes live.
    public func changesLive(_ name: String) -> Bool { live.contains { $0.name == name } }

    /// Every key compared, in order, and whether it changes live.
    public static var keyNames: [(name: String, isLive: Bool)] { entries().map { ($0.name, $0.isLive) } }

    /// A key of ``AgentConfiguration``, how to show its value and how to keep the running one.
    private struct Entry {
        var name: String
        var isLive: Bool
        var differs: (AgentConfiguration, AgentConfiguration) -> Bool
        var text: (AgentConfiguration) -> String
        var keep: (inout AgentConfiguration, AgentConfiguration) -> Void

        init<Value: Equatable>(_ name: String, _ path: WritableKeyPath<AgentConfiguration, Value>, live: Bool,
                               text: @escaping (Value) -> String = { "\($0)" }) {
            self.name = name
            self.isLive = live
            differs = { $0[keyPath: path] != $1[keyPath: path] }
            self.text = { text($0[keyPath: path]) }
            keep = { $0[keyPath: path] = $1[keyPath: path] }
        }
    }

    private static func entries() -> [Entry] {
        let seconds: (Duration) -> String = { duration in
            let (whole, attoseconds) = duration.components
            let milliseconds = whole * 1000 + attoseconds / 1_000_000_000_000_000
            return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(Double(milliseconds) / 1000) s"
        }
        let words: ([String]) -> String = { "[\($0.joined(separator: " "))]" }
        return [
            Entry("name", \.name, live: false),
            Entry("port", \.port, live: false),
            Entry("listenAddress", \.listenAddress, live: false),
            Entry("socketPath", \.socketPath, live: false),
            Entry("serviceType", \.serviceType, live: false),
            Entry("stateDirectory", \.stateDirectory, live: false),
            Entry("security.handshakeTimeout", \.security.handshakeTimeout, live: false, text: seconds),
            Entry("security.maxUnauthenticatedConnections", \.security.maxUnauthenticatedConnections, live: false),
            Entry("security.maxUnauthenticatedPerAddress", \.security.maxUnauthenticatedPerAddress, live: false),
            Entry("security.connectionsPerSecondPerAddress", \.security.connectionsPerSecondPerAddress, live: false),
            Entry("security.maxConnectionsPerDevice", \.security.maxConnectionsPerDevice, live: false),
            Entry("liveness.interval", \.liveness.interval, live: false, text: seconds),
            Entry("liveness.timeout", \.liveness.timeout, live: false, text: seconds),
            // Never the TSIG secret in a log line: the domain, the server and the key's name.
            Entry("wideArea", \.wideArea, live: false) { $0.map { "\($0.domain) at \($0.server), key \($0.tsigKeyName)" } ?? "off" },
            Entry("handlers", \.handlers, live: true) { handlers in
                "\(handlers.count) handler\(handlers.count == 1 ? "" : "s")"
                    + (handlers.isEmpty ? "" : ": " + handlers.map { "\($0.activityTypes.joined(separator: ",")) \(words($0.command))" }.joined(separator: "; "))
            },
            Entry("urlOpener", \.urlOpener, live: true, text: words),
            Entry("logLevel", \.logLevel, live: true),
            Entry("notifications", \.notifications, live: true),
            Entry("clipboard.maxBytes", \.clipboard.maxBytes, live: true),
            Entry("clipboard.expiry", \.clipboard.expiry, live: true, text: seconds),
            Entry("clipboard.sync", \.clipboard.sync, live: true),
            Entry("clipboard.syncMaxBytes", \.clipboard.syncMaxBytes, live: true),
            Entry("faults", \.faults, live: true) { $0.json.serialized },
            Entry("limits.maxUserInfoBytes", \.limits.maxUserInfoBytes, live: true),
            Entry("limits.connectTimeout", \.limits.connectTimeout, live: true, text: seconds),
            Entry("limits.fetchTimeout", \.limits.fetchTimeout, live: true, text: seconds),
            Entry("limits.handlerTimeout", \.limits.handlerTimeout, live: true, text: seconds),
            Entry("limits.maxOpenFileBytes", \.limits.maxOpenFileBytes, live: true),
            Entry("limits.maxInboxBytesPerDevice", \.limits.maxInboxBytesPerDevice, live: true),
            Entry("limits.streamIdleTimeout", \.limits.streamIdleTimeout, live: true, text: seconds),
            Entry("inboxDirectory", \.inboxDirectory, live: true),
            Entry("appsDirectory", \.appsDirectory, live: true),
            Entry("security.pairingTimeout", \.security.pairingTimeout, live: true, text: seconds),
            Entry("security.urlSchemes", \.security.urlSchemes, live: true, text: words),
            Entry("receive.enabled", \.receive.enabled, live: true),
            Entry("receive.directory", \.receive.directory, live: true) { $0.isEmpty ? "the desktop's download directory" : $0 },
            Entry("receive.maxBytes", \.receive.maxBytes, live: true),
        ]
    }
}

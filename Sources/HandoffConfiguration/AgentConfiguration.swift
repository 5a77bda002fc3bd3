import Configuration
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore

/// The agent's settings. config/handoffd.json documents every key with its default.
public struct AgentConfiguration: Sendable, Equatable {
    /// A handler command for some activity types.
    public struct Handler: Sendable, Equatable {
        /// The types it takes; `"*"` takes every type.
        public var activityTypes: [String]
        /// The argv to run; the activity arrives as JSON on standard input. Exit 0 means handled.
        public var command: [String]
        /// When the activity supports continuation streams, the command's standard input and
        /// output become the streams to the source app, and the activity's JSON is in
        /// `HANDOFF_ACTIVITY` instead.
        public var streams: Bool

        public init(activityTypes: [String], command: [String], streams: Bool = false) {
            self.activityTypes = activityTypes
            self.command = command
            self.streams = streams
        }

        /// Whether the handler takes this type.
        public func accepts(_ type: ActivityType) -> Bool {
            activityTypes.contains("*") || activityTypes.contains(type.rawValue)
        }
    }

    /// Size limits and timeouts.
    public struct Limits: Sendable, Equatable {
        /// `limits.maxUserInfoBytes`: the largest encoded userInfo this agent accepts (4611 above it).
        public var maxUserInfoBytes: Int = 3072
        /// `limits.connectTimeout`: seconds to connect to a source agent (4609 on expiry).
        public var connectTimeout: Duration = .seconds(2)
        /// `limits.fetchTimeout`: seconds for the source to send the activity (4610 on expiry).
        public var fetchTimeout: Duration = .seconds(5)
        /// `limits.handlerTimeout`: seconds a handler command may run before it is killed.
        public var handlerTimeout: Duration = .seconds(30)
        /// `limits.maxOpenFileBytes`: the largest file a peer may send to an app (`handoff open`).
        public var maxOpenFileBytes: Int = 64 * 1024 * 1024
        /// `limits.maxInboxBytesPerDevice`: the most bytes of files one peer device may have in
        /// apps' Inboxes at once (files an app deleted no longer count).
        public var maxInboxBytesPerDevice: Int = 256 * 1024 * 1024
        /// `limits.streamIdleTimeout`: seconds a continuation stream may go without a byte from
        /// the source before the continuing agent ends it with 4610; 0 (the default) never, as
        /// with Apple's streams, which may stay quiet while a person works.
        public var streamIdleTimeout: Duration = .zero
    }

    /// How fast a crashed or cut-off paired peer is noticed (docs/PROTOCOL.md, "Liveness").
    public struct Liveness: Sendable, Equatable {
        /// `liveness.interval`: seconds between pings to each paired peer; while a peer is not
        /// connected, a connection is tried every half of this.
        public var interval: Duration = .seconds(1)
        /// `liveness.timeout`: seconds without an answer after which a peer is unreachable (its
        /// activities are no longer listed, and continuing them fails at once with 4609).
        public var timeout: Duration = .seconds(2)
    }

    /// Protection of the peer listener before a peer is authenticated, and pairing.
    public struct Security: Sendable, Equatable {
        /// `security.handshakeTimeout`: seconds a new peer connection has to finish TLS and prove
        /// it is a paired device (or start an accepted pairing); then it is closed.
        public var handshakeTimeout: Duration = .seconds(1)
        /// `security.maxUnauthenticatedConnections`: peer connections not yet authenticated, in all.
        public var maxUnauthenticatedConnections: Int = 64
        /// `security.maxUnauthenticatedPerAddress`: the same, from one address.
        public var maxUnauthenticatedPerAddress: Int = 8
        /// `security.connectionsPerSecondPerAddress`: new connections per second from one address
        /// (bursts of twice as many).
        public var connectionsPerSecondPerAddress: Int = 20
        /// `security.maxConnectionsPerDevice`: peer connections one device (paired or not) may
        /// have open to this agent at once; more are closed as soon as TLS names the device.
        public var maxConnectionsPerDevice: Int = 64
        /// `security.pairingTimeout`: seconds `handoff pair` and `handoff pair --accept` wait.
        public var pairingTimeout: Duration = .seconds(120)
        /// `security.urlSchemes`: the schemes of a peer's web page URL that `urlOpener` may open
        /// (``PeerURLPolicy``); never `file`.
        public var urlSchemes: [String] = PeerURLPolicy.defaultWebpageSchemes
    }

    /// `name`: the agent's name, shown to paired peers (default: the host name). The DNS-SD
    /// instance name is opaque, so that unpaired observers learn nothing.
    public var name: String
    /// The default peer port, fixed so that a firewall can allow it (scripts/install installs
    /// firewalld and ufw definitions for it). Unassigned by IANA, and used by none of the peer
    /// tools (KDE Connect 1714-1764, Syncthing 22000, Warpinator 42000-42001, LocalSend 53317).
    public static let defaultPort = 52123
    /// `port`: TCP port for peers (default ``defaultPort``); 0 picks any free port. handoffd
    /// takes any free port, with a warning, when this one is taken. The port is advertised.
    public var port: Int = AgentConfiguration.defaultPort
    /// The default ``listenAddress``: every IPv6 and (as v4-mapped addresses) IPv4 address.
    public static let dualStackListenAddress = "::"
    /// `listenAddress`: the address the peer listener binds; default ``dualStackListenAddress``
    /// (handoffd binds `0.0.0.0` instead on a host without IPv6).
    public var listenAddress: String = AgentConfiguration.dualStackListenAddress
    /// `socketPath`: the control socket for the CLI and apps (mode 0600).
    public var socketPath: String
    /// `serviceType`: the DNS-SD service type.
    public var serviceType: String = "_handoff._tcp"
    /// `limits.*`.
    public var limits = Limits()
    /// `handlers`: commands that continue activities, tried in order.
    public var handlers: [Handler] = []
    /// `urlOpener`: the argv that opens an activity's webpageURL when no handler takes it.
    public var urlOpener: [String] = ["xdg-open"]
    /// `inboxDirectory`: files sent by peers land in `<inboxDirectory>/<bundleID>/Inbox`.
    public var inboxDirectory: String
    /// `appsDirectory`: `*.json` app manifests with a `launch` command; the agent starts such an
    /// app when an activity or a file is for it and it is not running. Empty: none.
    public var appsDirectory: String = ""
    /// `logLevel`: trace, debug, info, notice, warning, error or critical.
    public var logLevel: String = "info"
    /// `faults.*`: deliberate misbehaviour as a source, to test apps against failures
    /// (docs/FAULTS.md); `handoff fault` changes it while the agent runs.
    public var faults = FaultPlan()
    /// `stateDirectory`: the device identity (key and certificate), the paired devices and the
    /// advertising key, all mode 0600.
    public var stateDirectory: String
    /// `security.*`.
    public var security = Security()
    /// `liveness.*`.
    public var liveness = Liveness()
    /// `notifications`: post a desktop notification for each paired device's newest activity on
    /// offer (docs/NOTIFICATIONS.md).
    public var notifications = true
    /// `wideArea.*`: wide-area DNS-SD; nil (off) unless `wideArea.domain` is set.
    public var wideArea: WideAreaConfiguration?
    /// `clipboard.*`: the Universal Clipboard.
    public var clipboard = ClipboardConfiguration()
    /// `receive.*`: files sent here by paired devices.
    public var receive = ReceiveConfiguration()

    /// The defaults, given the host name and the default socket path.
    public init(name: String, socketPath: String, inboxDirectory: String? = nil) {
        self.name = name
        self.socketPath = socketPath
        self.inboxDirectory = inboxDirectory ?? Self.defaultInboxDirectory()
        self.stateDirectory = Self.defaultStateDirectory()
    }

    /// `$XDG_STATE_HOME/handoff`, else `$HOME/.local/state/handoff`; empty when neither is set
    /// (there is no shared `/tmp` fallback: the agent then refuses to start and asks for one).
    public static func defaultStateDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        stateHome(environment).map { $0 + "/handoff" } ?? ""
    }

    /// `$XDG_STATE_HOME/handoff/apps`, else `$HOME/.local/state/handoff/apps`; empty when neither
    /// is set (no `/tmp` fallback: files sent to apps are then refused, asking for one).
    public static func defaultInboxDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        stateHome(environment).map { $0 + "/handoff/apps" } ?? ""
    }

    private static func stateHome(_ environment: [String: String]) -> String? {
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.local/state" }
        return nil
    }

    /// Reads every key from `reader`; a missing key keeps its default. Values are range-checked
    /// and a bad one is refused with its key's name.
    public init(reader: ConfigReader, defaultName: String, defaultSocketPath: String) throws(ConfigurationError) {
        self.init(name: reader.string(forKey: "name", default: defaultName),
                  socketPath: reader.string(forKey: "socketPath", default: defaultSocketPath),
                  inboxDirectory: reader.string(forKey: "inboxDirectory"))
        port = reader.int(forKey: "port", default: port)
        listenAddress = reader.string(forKey: "listenAddress", default: listenAddress)
        serviceType = reader.string(forKey: "serviceType", default: serviceType)
        appsDirectory = reader.string(forKey: "appsDirectory", default: appsDirectory)
        limits.maxUserInfoBytes = reader.int(forKey: "limits.maxUserInfoBytes", default: limits.maxUserInfoBytes)
        limits.maxOpenFileBytes = reader.int(forKey: "limits.maxOpenFileBytes", default: limits.maxOpenFileBytes)
        limits.maxInboxBytesPerDevice = reader.int(forKey: "limits.maxInboxBytesPerDevice", default: limits.maxInboxBytesPerDevice)
        limits.connectTimeout = try Self.seconds(reader, "limits.connectTimeout", default: limits.connectTimeout)
        limits.fetchTimeout = try Self.seconds(reader, "limits.fetchTimeout", default: limits.fetchTimeout)
        limits.handlerTimeout = try Self.seconds(reader, "limits.handlerTimeout", default: limits.handlerTimeout)
        urlOpener = reader.stringArray(forKey: "urlOpener", default: urlOpener)
        logLevel = reader.string(forKey: "logLevel", default: logLevel)
        notifications = reader.bool(forKey: "notifications", default: notifications)
        stateDirectory = reader.string(forKey: "stateDirectory", default: stateDirectory)
        security.handshakeTimeout = try Self.seconds(reader, "security.handshakeTimeout", default: security.handshakeTimeout)
        security.pairingTimeout = try Self.seconds(reader, "security.pairingTimeout", default: security.pairingTimeout)
        security.urlSchemes = reader.stringArray(forKey: "security.urlSchemes", default: security.urlSchemes)
        security.maxUnauthenticatedConnections = reader.int(forKey: "security.maxUnauthenticatedConnections", default: security.maxUnauthenticatedConnections)
        security.maxUnauthenticatedPerAddress = reader.int(forKey: "security.maxUnauthenticatedPerAddress", default: security.maxUnauthenticatedPerAddress)
        security.connectionsPerSecondPerAddress = reader.int(forKey: "security.connectionsPerSecondPerAddress", default: security.connectionsPerSecondPerAddress)
        security.maxConnectionsPerDevice = reader.int(forKey: "security.maxConnectionsPerDevice", default: security.maxConnectionsPerDevice)
        liveness.interval = try Self.seconds(reader, "liveness.interval", default: liveness.interval)
        liveness.timeout = try Self.seconds(reader, "liveness.timeout", default: liveness.timeout)
        limits.streamIdleTimeout = try Self.seconds(reader, "limits.streamIdleTimeout", default: limits.streamIdleTimeout, allowZero: true)
        for fault in FaultPlan.Fault.allCases {
            let key = "faults.\(fault.rawValue)"
            switch fault.value {
            case .flag:
                faults.set(fault, flag: reader.bool(forKey: ConfigKey(key), default: false))
            case .milliseconds, .bytes:
                guard let number = reader.int(forKey: ConfigKey(key)) else { continue }
                guard number >= 0 else { throw ConfigurationError(key: key, "must be 0 or more \(fault.value == .bytes ? "bytes" : "milliseconds")") }
                faults.set(fault, number: number)
            }
        }
        wideArea = try WideAreaConfiguration(reader: reader)
        clipboard = try ClipboardConfiguration(reader: reader)
        receive = try ReceiveConfiguration(reader: reader)
        var index = 0
        while let command = reader.stringArray(forKey: ConfigKey("handlers.\(index).command")) {
            let key = "handlers[\(index)]"
            let types = reader.stringArray(forKey: ConfigKey("handlers.\(index).activityTypes"), default: [])
            guard !command.isEmpty, !command[0].isEmpty else { throw ConfigurationError(key: "\(key).command", "must name a program, e.g. [\"/usr/local/bin/open-note\"]") }
            guard !types.isEmpty else { throw ConfigurationError(key: "\(key).activityTypes", "must list at least one activity type, or \"*\"") }
            for type in types where type != "*" {
                do { _ = try ActivityType(validating: type) } catch { throw ConfigurationError(key: "\(key).activityTypes", error.description) }
            }
            handlers.append(Handler(activityTypes: types, command: command,
                                    streams: reader.bool(forKey: ConfigKey("handlers.\(index).streams"), default: false)))
            index += 1
        }
        try validate()
    }

    private static func seconds(_ reader: ConfigReader, _ key: String, default value: Duration, allowZero: Bool = false) throws(ConfigurationError) -> Duration {
        guard let seconds = reader.double(forKey: ConfigKey(key)) else { return value }
        guard seconds >= 0.001 || (allowZero && seconds == 0), seconds <= 3600 else {
            throw ConfigurationError(key: key, "must be \(allowZero ? "0 (off) or " : "")from 0.001 to 3600 seconds, got \(seconds)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    private func validate() throws(ConfigurationError) {
        guard !name.isEmpty, name.utf8.count <= 63 else { throw ConfigurationError(key: "name", "must be 1 to 63 bytes (a DNS-SD instance name)") }
        guard (0...65535).contains(port) else { throw ConfigurationError(key: "port", "must be 0 to 65535, got \(port)") }
        guard !socketPath.isEmpty, socketPath.utf8.count < 100 else {
            throw ConfigurationError(key: "socketPath", "must be a path shorter than 100 bytes (Unix socket limit)")
        }
        guard serviceType.hasPrefix("_"), serviceType.hasSuffix("._tcp") else {
            throw ConfigurationError(key: "serviceType", "must look like _handoff._tcp")
        }
        guard (1...(16 * 1024 * 1024)).contains(limits.maxUserInfoBytes) else {
            throw ConfigurationError(key: "limits.maxUserInfoBytes", "must be 1 to 16777216 bytes, got \(limits.maxUserInfoBytes)")
        }
        guard limits.maxInboxBytesPerDevice >= 0 else {
            throw ConfigurationError(key: "limits.maxInboxBytesPerDevice", "must be 0 or more bytes (0 refuses every file)")
        }
        guard limits.maxOpenFileBytes >= 0 else {
            throw ConfigurationError(key: "limits.maxOpenFileBytes", "must be 0 or more bytes (0 refuses every file)")
        }
        guard stateDirectory.hasPrefix("/") else { throw ConfigurationError(key: "stateDirectory", "must be an absolute path") }
        for (key, value) in [("security.maxUnauthenticatedConnections", security.maxUnauthenticatedConnections),
                             ("security.maxUnauthenticatedPerAddress", security.maxUnauthenticatedPerAddress),
                             ("security.connectionsPerSecondPerAddress", security.connectionsPerSecondPerAddress),
                             ("security.maxConnectionsPerDevice", security.maxConnectionsPerDevice)] {
            guard (1...100_000).contains(value) else { throw ConfigurationError(key: key, "must be 1 to 100000, got \(value)") }
        }
        guard liveness.interval >= .milliseconds(100) else {
            throw ConfigurationError(key: "liveness.interval", "must be at least 0.1 seconds, got \(liveness.interval)")
        }
        guard liveness.timeout > liveness.interval else {
            throw ConfigurationError(key: "liveness.timeout", "must be longer than liveness.interval (\(liveness.interval)), so that a peer has a ping to answer; got \(liveness.timeout)")
        }
        guard inboxDirectory.hasPrefix("/") else { throw ConfigurationError(key: "inboxDirectory", "must be an absolute path") }
        for (index, scheme) in security.urlSchemes.enumerated() {
            if let problem = PeerURLPolicy.problem(withScheme: scheme) { throw ConfigurationError(key: "security.urlSchemes[\(index)]", problem) }
        }
        guard !urlOpener.isEmpty, !urlOpener[0].isEmpty else { throw ConfigurationError(key: "urlOpener", "must name a program, e.g. [\"xdg-open\"]") }
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        guard levels.contains(logLevel) else { throw ConfigurationError(key: "logLevel", "must be one of \(levels.joined(separator: ", "))") }
    }
}

/// A configuration that cannot be used: names the key and says what is expected.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key, such as `limits.fetchTimeout` or `handlers[1].command`.
    public var key: String
    /// What is wrong.
    public var reason: String

    public init(key: String, _ reason: String) {
        self.key = key
        self.reason = reason
    }

    public var description: String { key.isEmpty ? reason : "config key \(key): \(reason)" }
}

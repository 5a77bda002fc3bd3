import HandoffCore
import Testing

@testable import HandoffConfiguration

/// What a reload (SIGHUP) changes: ``ConfigurationChange`` between the running configuration
/// and the file read again, for every key.
@Suite("ConfigurationChange")
struct ConfigurationChangeTests {
    /// The running configuration: a file that sets nothing.
    static let running = parse("{}")

    static func parse(_ json: String) -> AgentConfiguration {
        try! ConfigurationFile.parse(Array(json.utf8), source: "/etc/handoff/handoffd.json", defaultName: "host-one",
                                     defaultSocketPath: "/run/user/1000/handoff/handoffd.sock")
    }

    /// A file that sets `key` (dotted: `limits.fetchTimeout` is nested) to the JSON `value`.
    static func file(_ key: String, _ value: String) -> AgentConfiguration {
        let parts = key.split(separator: ".").map(String.init)
        let json = parts.reversed().reduce(value) { inner, part in "{\"\(part)\": \(inner)}" }
        return parse(json)
    }

    /// One value other than the default for every key that changes live.
    static let liveKeys: [(key: String, value: String)] = [
        ("handlers", #"[{"activityTypes": ["*"], "command": ["/bin/true"]}]"#),
        ("urlOpener", #"["firefox"]"#),
        ("logLevel", #""debug""#),
        ("notifications", "false"),
        ("faults", #"{"payloadDelayMs": 100}"#),
        ("limits.maxUserInfoBytes", "100"),
        ("limits.connectTimeout", "3"),
        ("limits.fetchTimeout", "7.5"),
        ("limits.handlerTimeout", "10"),
        ("limits.maxOpenFileBytes", "10"),
        ("limits.maxInboxBytesPerDevice", "10"),
        ("limits.streamIdleTimeout", "30"),
        ("inboxDirectory", #""/srv/inbox""#),
        ("appsDirectory", #""/srv/apps""#),
        ("security.pairingTimeout", "60"),
        ("security.urlSchemes", #"["https"]"#),
        ("clipboard.maxBytes", "10"),
        ("clipboard.expiry", "30"),
        ("clipboard.sync", "true"),
        ("clipboard.syncMaxBytes", "10"),
        ("receive.enabled", "false"),
        ("receive.directory", #""/srv/incoming""#),
        ("receive.maxBytes", "1000"),
    ]

    /// One value other than the default for every key that needs a restart.
    static let restartKeys: [(key: String, value: String)] = [
        ("name", #""host-two""#),
        ("port", "52200"),
        ("listenAddress", #""127.0.0.1""#),
        ("socketPath", #""/run/user/1000/other.sock""#),
        ("serviceType", #""_other._tcp""#),
        ("stateDirectory", #""/srv/state""#),
        ("security.handshakeTimeout", "2"),
        ("security.maxUnauthenticatedConnections", "10"),
        ("security.maxUnauthenticatedPerAddress", "2"),
        ("security.connectionsPerSecondPerAddress", "5"),
        ("security.maxConnectionsPerDevice", "5"),
        ("liveness.interval", "0.5"),
        ("liveness.timeout", "3"),
        ("wideArea", #"{"domain": "handoff.test.", "server": "192.0.2.53", "tsigKeyName": "k", "tsigSecret": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTMyYg=="}"#),
    ]

    @Test("the same configuration read again changes nothing")
    func equalConfigurations() {
        let change = ConfigurationChange(from: Self.running, to: Self.parse("{}"))
        #expect(change.isEmpty)
        #expect(change.live.isEmpty && change.needingRestart.isEmpty)
        #expect(change.running == Self.running)
    }

    @Test("a live key changes at once: the configuration to run on has its new value", arguments: liveKeys.map(\.key))
    func liveKey(_ key: String) {
        let value = Self.liveKeys.first { $0.key == key }!.value
        let new = Self.file(key, value)
        #expect(new != Self.running, "the test value of \(key) must differ from its default")
        let change = ConfigurationChange(from: Self.running, to: new)
        #expect(change.live.map(\.name) == [key])
        #expect(change.needingRestart.isEmpty)
        #expect(change.changesLive(key))
        #expect(change.running == new)
    }

    @Test("a key that needs a restart is reported with both values and keeps its running value", arguments: restartKeys.map(\.key))
    func restartKey(_ key: String) {
        let value = Self.restartKeys.first { $0.key == key }!.value
        let new = Self.file(key, value)
        #expect(new != Self.running, "the test value of \(key) must differ from its default")
        let change = ConfigurationChange(from: Self.running, to: new)
        #expect(change.needingRestart.map(\.name) == [key])
        #expect(change.live.isEmpty)
        #expect(!change.changesLive(key))
        #expect(change.running == Self.running)
    }

    @Test("the restart line names the key with the old and the new value")
    func restartDescription() {
        let change = ConfigurationChange(from: Self.running, to: Self.file("port", "52200"))
        #expect(change.needingRestart.map(\.description) == ["port (52123 -> 52200)"])
        let timeout = ConfigurationChange(from: Self.running, to: Self.file("liveness.timeout", "2.5"))
        #expect(timeout.needingRestart.map(\.description) == ["liveness.timeout (2 s -> 2.5 s)"])
    }

    @Test("live and restart keys together: the new handler and fetchTimeout run, the old port stays")
    func mixed() {
        let new = Self.parse(#"""
            {"port": 52200, "name": "renamed", "limits": {"fetchTimeout": 9},
             "handlers": [{"activityTypes": ["com.example.note"], "command": ["/usr/bin/open-note"]}]}
            """#)
        let change = ConfigurationChange(from: Self.running, to: new)
        #expect(change.live.map(\.name) == ["handlers", "limits.fetchTimeout"])
        #expect(change.needingRestart.map(\.name) == ["name", "port"])
        #expect(change.running.port == Self.running.port)
        #expect(change.running.name == Self.running.name)
        #expect(change.running.handlers == new.handlers)
        #expect(change.running.limits.fetchTimeout == .seconds(9))
        #expect(change.live.first?.description == "handlers (0 handlers -> 1 handler: com.example.note [/usr/bin/open-note])")
    }

    @Test("every key of the file is compared, live or needing a restart, and the tests above cover each")
    func everyKeyClassified() {
        let compared = Dictionary(uniqueKeysWithValues: ConfigurationChange.keyNames.map { ($0.name, $0.isLive) })
        for key in ConfigurationFile.schema.keys {
            let name = key.hasPrefix("faults.") ? "faults" : key.hasPrefix("wideArea.") ? "wideArea" : key
            #expect(compared[name] != nil, "\(key) is in the file but not compared on reload")
        }
        #expect(compared["handlers"] == true)
        let wideArea = ConfigurationChange(from: Self.running, to: Self.file("wideArea", Self.restartKeys.first { $0.key == "wideArea" }!.value))
        #expect(wideArea.needingRestart.first?.description.contains("c2VjcmV0") == false, "the TSIG secret is never in a log line")
        #expect(Set(compared.filter(\.value).keys) == Set(Self.liveKeys.map(\.key)))
        #expect(Set(compared.filter { !$0.value }.keys) == Set(Self.restartKeys.map(\.key)))
    }
}

import HandoffAgent
import HandoffConfiguration
import HandoffCore
import Testing

import Foundation

@Suite("ConfigurationFile")
struct ConfigurationFileTests {
    static let source = "/etc/handoff/handoffd.json"
    static let defaultName = "host-one"
    static let defaultSocket = "/run/user/1000/handoff/handoffd.sock"

    func parse(_ json: String) throws(ConfigurationError) -> AgentConfiguration {
        try ConfigurationFile.parse(Array(json.utf8), source: Self.source, defaultName: Self.defaultName, defaultSocketPath: Self.defaultSocket)
    }

    /// The error a refused configuration gives; records an issue when it is accepted.
    func refusal(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigurationError? {
        do {
            let configuration = try parse(json)
            Issue.record("accepted \(json) as \(configuration)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    /// Checks that `json` is refused with `key`, and that the description names the key.
    func expectRefused(_ json: String, key: String, mentioning words: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) {
        guard let error = refusal(json, sourceLocation: sourceLocation) else { return }
        #expect(error.key == key, "\(json)", sourceLocation: sourceLocation)
        #expect(error.description.contains(key), "\(error.description)", sourceLocation: sourceLocation)
        for word in words {
            #expect(error.description.contains(word), "\(error.description) should mention \(word)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Accepted

    @Test("a full configuration with every key parses to the expected values")
    func fullConfiguration() throws {
        let json = """
            {
              "name": "studio",
              "port": 7017,
              "listenAddress": "127.0.0.1",
              "socketPath": "/tmp/handoff-test/handoffd.sock",
              "serviceType": "_handofftest._tcp",
              "limits": {
                "maxUserInfoBytes": 8192,
                "connectTimeout": 1.5,
                "fetchTimeout": 3,
                "handlerTimeout": 0.25
              },
              "handlers": [
                {"activityTypes": ["com.example.notes.edit", "com.example.notes.view"], "command": ["/usr/local/bin/open-note", "--stdin"]},
                {"activityTypes": ["*"], "command": ["logger", "-t", "handoff"]}
              ],
              "urlOpener": ["firefox", "--new-tab"],
              "logLevel": "debug",
              "faults": {"payloadDelayMs": 1500}
            }
            """
        let configuration = try parse(json)

        var expected = AgentConfiguration(name: "studio", socketPath: "/tmp/handoff-test/handoffd.sock")
        expected.port = 7017
        expected.listenAddress = "127.0.0.1"
        expected.serviceType = "_handofftest._tcp"
        expected.limits.maxUserInfoBytes = 8192
        expected.limits.connectTimeout = .milliseconds(1500)
        expected.limits.fetchTimeout = .seconds(3)
        expected.limits.handlerTimeout = .milliseconds(250)
        expected.handlers = [
            .init(activityTypes: ["com.example.notes.edit", "com.example.notes.view"], command: ["/usr/local/bin/open-note", "--stdin"]),
            .init(activityTypes: ["*"], command: ["logger", "-t", "handoff"]),
        ]
        expected.urlOpener = ["firefox", "--new-tab"]
        expected.logLevel = "debug"
        expected.faults.payloadDelay = .milliseconds(1500)
        #expect(configuration == expected)

        // Spot checks, so a failure above says which field differs.
        #expect(configuration.name == "studio")
        #expect(configuration.port == 7017)
        #expect(configuration.limits.connectTimeout == .milliseconds(1500))
        #expect(configuration.limits.fetchTimeout == .seconds(3))
        #expect(configuration.handlers.count == 2)
        #expect(configuration.handlers.first?.command == ["/usr/local/bin/open-note", "--stdin"])
        #expect(configuration.faults.payloadDelay == .milliseconds(1500))
    }

    @Test("an empty object gives every default")
    func defaults() throws {
        let configuration = try parse("{}")
        #expect(configuration.name == Self.defaultName)
        #expect(configuration.socketPath == Self.defaultSocket)
        #expect(configuration.port == AgentConfiguration.defaultPort)
        #expect(configuration.listenAddress == "::")  // dual-stack (issue 18, IPv6)
        #expect(configuration.serviceType == "_handoff._tcp")
        #expect(configuration.limits.maxUserInfoBytes == 3072)
        #expect(configuration.limits.connectTimeout == .seconds(2))
        #expect(configuration.limits.fetchTimeout == .seconds(5))
        #expect(configuration.limits.handlerTimeout == .seconds(30))
        #expect(configuration.handlers.isEmpty)
        #expect(configuration.urlOpener == ["xdg-open"])
        #expect(configuration.logLevel == "info")
        #expect(configuration.faults.payloadDelay == .zero)
        #expect(configuration.liveness.interval == .seconds(1))
        #expect(configuration.liveness.timeout == .seconds(2))
        #expect(configuration == AgentConfiguration(name: Self.defaultName, socketPath: Self.defaultSocket))
    }

    @Test("every fault and limits.streamIdleTimeout are read from the file; bad values are refused by key")
    func faults() throws {
        let text = """
            {"faults": {"payloadDelayMs": 10, "dropAfterBytes": 0, "stallStreamAfterBytes": 4096, "corruptFrame": true,
                        "refuseConnections": false, "willSaveDelayMs": 20, "advertiseGoneData": true},
             "limits": {"streamIdleTimeout": 1.5}}
            """
        let configuration = try ConfigurationFile.parse(Array(text.utf8), source: "test", defaultName: Self.defaultName, defaultSocketPath: Self.defaultSocket)
        #expect(configuration.faults.payloadDelay == .milliseconds(10))
        #expect(configuration.faults.dropAfterBytes == 0)
        #expect(configuration.faults.stallStreamAfterBytes == 4096)
        #expect(configuration.faults.corruptFrame && !configuration.faults.refuseConnections && configuration.faults.advertiseGoneData)
        #expect(configuration.faults.willSaveDelay == .milliseconds(20))
        #expect(configuration.limits.streamIdleTimeout == .milliseconds(1500))
        for (bad, key) in [(#"{"faults": {"dropAfterBytes": -1}}"#, "faults.dropAfterBytes"), (#"{"faults": {"corruptFrame": 1}}"#, "faults.corruptFrame"),
                           (#"{"limits": {"streamIdleTimeout": -1}}"#, "limits.streamIdleTimeout")] {
            #expect { _ = try ConfigurationFile.parse(Array(bad.utf8), source: "test", defaultName: Self.defaultName, defaultSocketPath: Self.defaultSocket) }
                throws: { ($0 as? ConfigurationError)?.key == key }
        }
    }

    @Test("liveness intervals are read in seconds; a timeout not longer than the interval is refused")
    func liveness() throws {
        let configuration = try parse(#"{"liveness": {"interval": 0.5, "timeout": 2}}"#)
        #expect(configuration.liveness.interval == .milliseconds(500))
        #expect(configuration.liveness.timeout == .seconds(2))
        expectRefused(#"{"liveness": {"interval": 3}}"#, key: "liveness.timeout", mentioning: ["longer than liveness.interval"])
        expectRefused(#"{"liveness": {"interval": 0.05, "timeout": 1}}"#, key: "liveness.interval", mentioning: ["0.1"])
        expectRefused(#"{"liveness": {"interval": "1"}}"#, key: "liveness.interval", mentioning: ["number of seconds"])
        expectRefused(#"{"liveness": {"period": 1}}"#, key: "liveness.period")
    }

    @Test("the security caps are read by key; zero, negative and huge caps are refused naming the key")
    func securityCaps() throws {
        #expect(try parse("{}").security.maxConnectionsPerDevice == 64)
        let configuration = try parse(#"{"security": {"maxConnectionsPerDevice": 16, "maxUnauthenticatedConnections": 10}}"#)
        #expect(configuration.security.maxConnectionsPerDevice == 16)
        #expect(configuration.security.maxUnauthenticatedConnections == 10)
        for key in ["maxConnectionsPerDevice", "maxUnauthenticatedConnections", "maxUnauthenticatedPerAddress", "connectionsPerSecondPerAddress"] {
            for bad in ["0", "-1", "100001"] {
                expectRefused(#"{"security": {"\#(key)": \#(bad)}}"#, key: "security.\(key)", mentioning: ["1 to 100000"])
            }
            expectRefused(#"{"security": {"\#(key)": "8"}}"#, key: "security.\(key)")
        }
    }

    @Test("keys that are absent keep their defaults while others are set")
    func partialConfiguration() throws {
        let configuration = try parse(#"{"limits": {"fetchTimeout": 9}, "port": 7000}"#)
        #expect(configuration.port == 7000)
        #expect(configuration.limits.fetchTimeout == .seconds(9))
        #expect(configuration.limits.connectTimeout == .seconds(2))
        #expect(configuration.limits.maxUserInfoBytes == 3072)
        #expect(configuration.urlOpener == ["xdg-open"])
        #expect(configuration.serviceType == "_handoff._tcp")
    }

    @Test("a handler with \"*\" takes every activity type")
    func starHandler() throws {
        let configuration = try parse(#"{"handlers": [{"activityTypes": ["*"], "command": ["/bin/cat"]}]}"#)
        let handler = try #require(configuration.handlers.first)
        #expect(handler.activityTypes == ["*"])
        #expect(handler.accepts(ActivityType(rawValue: "com.example.notes.edit")!))
        #expect(handler.accepts(.browsingWeb))
        #expect(handler.accepts(ActivityType(rawValue: "org.other.thing")!))
    }

    @Test("a handler for named types takes only those")
    func namedHandler() throws {
        let configuration = try parse(#"{"handlers": [{"activityTypes": ["com.example.notes.edit", "NSUserActivityTypeBrowsingWeb"], "command": ["/bin/cat"]}]}"#)
        let handler = try #require(configuration.handlers.first)
        #expect(handler.accepts(ActivityType(rawValue: "com.example.notes.edit")!))
        #expect(handler.accepts(.browsingWeb))
        #expect(!handler.accepts(ActivityType(rawValue: "com.example.notes.view")!))
    }

    @Test("handlers keep their order")
    func handlerOrder() throws {
        let configuration = try parse("""
            {"handlers": [
              {"activityTypes": ["a.b"], "command": ["first"]},
              {"activityTypes": ["a.b"], "command": ["second"]},
              {"activityTypes": ["a.b"], "command": ["third"]}
            ]}
            """)
        #expect(configuration.handlers.map(\.command) == [["first"], ["second"], ["third"]])
    }

    @Test("timeouts may be integers or fractions of a second")
    func fractionalSeconds() throws {
        let configuration = try parse(#"{"limits": {"connectTimeout": 0.5, "fetchTimeout": 10, "handlerTimeout": 3600}}"#)
        #expect(configuration.limits.connectTimeout == .milliseconds(500))
        #expect(configuration.limits.fetchTimeout == .seconds(10))
        #expect(configuration.limits.handlerTimeout == .seconds(3600))
    }

    @Test("load reads a file")
    func loadFromFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("handoffd-\(UUID().uuidString).json").path
        try Data(#"{"name": "from-file", "port": 7100}"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = try ConfigurationFile.load(path: path, defaultName: "x", defaultSocketPath: "/tmp/x.sock")
        #expect(configuration.name == "from-file")
        #expect(configuration.port == 7100)
    }

    @Test("an empty appsDirectory means no apps, not the config file's directory; a relative one is relative to it")
    func appsDirectoryRelativeToFile() throws {
        #expect(try ConfigurationFile.parse(Array(#"{"appsDirectory": ""}"#.utf8), source: "/etc/handoff/handoffd.json",
                                            defaultName: "x", defaultSocketPath: "/tmp/x.sock").appsDirectory == "")
        #expect(try ConfigurationFile.parse(Array(#"{"appsDirectory": "apps"}"#.utf8), source: "/etc/handoff/handoffd.json",
                                            defaultName: "x", defaultSocketPath: "/tmp/x.sock").appsDirectory == "/etc/handoff/apps")
    }

    @Test("load of a missing file names the file")
    func loadMissingFile() {
        let path = "/nonexistent/handoff-\(UUID().uuidString).json"
        do {
            _ = try ConfigurationFile.load(path: path, defaultName: "x", defaultSocketPath: "/tmp/x.sock")
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.description.contains(path))
        }
    }

    // MARK: Refused: unknown keys

    @Test("an unknown top-level key is refused by name")
    func unknownTopLevelKey() {
        expectRefused(#"{"colour": "blue"}"#, key: "colour", mentioning: ["not a known key"])
        expectRefused(#"{"Port": 7000}"#, key: "Port")
        expectRefused(#"{"extra": {"nested": 1}}"#, key: "extra")
    }

    @Test("an unknown key inside limits is refused by its full name")
    func unknownLimitsKey() {
        expectRefused(#"{"limits": {"maxUserInfo": 10}}"#, key: "limits.maxUserInfo", mentioning: ["maxUserInfoBytes"])
        expectRefused(#"{"faults": {"dropFrames": true}}"#, key: "faults.dropFrames")
    }

    // MARK: Refused: wrong types

    @Test("port as a string is refused")
    func portAsString() {
        expectRefused(#"{"port": "7000"}"#, key: "port", mentioning: ["integer", "string"])
    }

    @Test("port as a fraction is refused")
    func portAsFraction() {
        expectRefused(#"{"port": 7000.5}"#, key: "port", mentioning: ["integer"])
    }

    @Test("fetchTimeout as a string is refused")
    func fetchTimeoutAsString() {
        expectRefused(#"{"limits": {"fetchTimeout": "5"}}"#, key: "limits.fetchTimeout", mentioning: ["seconds"])
    }

    @Test("urlOpener as a string is refused")
    func urlOpenerAsString() {
        expectRefused(#"{"urlOpener": "xdg-open"}"#, key: "urlOpener", mentioning: ["array of strings"])
        expectRefused(#"{"urlOpener": ["xdg-open", 1]}"#, key: "urlOpener")
    }

    @Test("name and logLevel must be strings")
    func stringsMustBeStrings() {
        expectRefused(#"{"name": 5}"#, key: "name")
        expectRefused(#"{"logLevel": null}"#, key: "logLevel")
    }

    @Test("limits that is not an object is refused by name")
    func limitsNotObject() {
        expectRefused(#"{"limits": 5}"#, key: "limits")
    }

    @Test("handlers that is not an array is refused")
    func handlersNotArray() {
        expectRefused(#"{"handlers": {"activityTypes": ["*"], "command": ["cat"]}}"#, key: "handlers")
        expectRefused(#"{"handlers": "cat"}"#, key: "handlers")
    }

    @Test("a handler that is not an object is refused")
    func handlerNotObject() {
        expectRefused(#"{"handlers": ["cat"]}"#, key: "handlers[0]")
    }

    @Test("a handler without command is refused")
    func handlerMissingCommand() {
        expectRefused(#"{"handlers": [{"activityTypes": ["*"]}]}"#, key: "handlers[0].command", mentioning: ["missing"])
        expectRefused(#"{"handlers": [{"activityTypes": ["*"], "command": ["ok"]}, {"activityTypes": ["*"]}]}"#, key: "handlers[1].command")
    }

    @Test("a handler with an unknown key is refused")
    func handlerUnknownKey() {
        expectRefused(#"{"handlers": [{"activityTypes": ["*"], "command": ["cat"], "timeout": 5}]}"#, key: "handlers[0].timeout")
    }

    @Test("a handler command that is empty is refused")
    func handlerEmptyCommand() {
        expectRefused(#"{"handlers": [{"activityTypes": ["*"], "command": []}]}"#, key: "handlers[0].command", mentioning: ["program"])
        expectRefused(#"{"handlers": [{"activityTypes": ["*"], "command": [""]}]}"#, key: "handlers[0].command")
    }

    @Test("a handler command that is a string is refused")
    func handlerCommandString() {
        expectRefused(#"{"handlers": [{"activityTypes": ["*"], "command": "cat"}]}"#, key: "handlers[0].command")
    }

    @Test("a handler without activity types is refused")
    func handlerWithoutTypes() {
        expectRefused(#"{"handlers": [{"command": ["cat"]}]}"#, key: "handlers[0].activityTypes")
        expectRefused(#"{"handlers": [{"activityTypes": [], "command": ["cat"]}]}"#, key: "handlers[0].activityTypes")
    }

    @Test("a handler with an invalid activity type is refused", arguments: ["notes", "com..example", "1com.example", "com.exa mple", ""])
    func handlerInvalidType(type: String) {
        expectRefused(#"{"handlers": [{"activityTypes": ["com.example.ok", "\#(type)"], "command": ["cat"]}]}"#,
                      key: "handlers[0].activityTypes", mentioning: ["reverse-DNS"])
    }

    // MARK: Refused: out of range

    @Test("port out of range is refused", arguments: [70000, 65536, -1])
    func portOutOfRange(port: Int) {
        expectRefused(#"{"port": \#(port)}"#, key: "port", mentioning: ["65535"])
    }

    @Test("port 65535 is accepted")
    func portMaximum() throws {
        #expect(try parse(#"{"port": 65535}"#).port == 65535)
    }

    @Test("fetchTimeout of zero or less is refused", arguments: ["0", "-1", "-0.5", "0.0"])
    func fetchTimeoutNotPositive(value: String) {
        expectRefused(#"{"limits": {"fetchTimeout": \#(value)}}"#, key: "limits.fetchTimeout")
    }

    @Test("a tiny positive timeout is either refused or kept above zero", arguments: ["connectTimeout", "fetchTimeout", "handlerTimeout"])
    func tinyTimeoutNotZero(key: String) throws {
        // 0.0004 s passes the "more than 0" check; it must not turn into a zero timeout (which
        // would fail every continuation at once, or kill every handler at once).
        let configuration: AgentConfiguration
        do {
            configuration = try parse(#"{"limits": {"\#(key)": 0.0004}}"#)
        } catch {
            #expect(error.key == "limits.\(key)")
            return
        }
        let value = switch key {
        case "connectTimeout": configuration.limits.connectTimeout
        case "fetchTimeout": configuration.limits.fetchTimeout
        default: configuration.limits.handlerTimeout
        }
        #expect(value > .zero, "limits.\(key) 0.0004 was accepted as \(value)")
    }

    @Test("timeouts over an hour are refused")
    func timeoutTooLong() {
        expectRefused(#"{"limits": {"connectTimeout": 3601}}"#, key: "limits.connectTimeout")
        expectRefused(#"{"limits": {"handlerTimeout": 0}}"#, key: "limits.handlerTimeout")
    }

    @Test("maxUserInfoBytes of zero is refused")
    func maxUserInfoZero() {
        expectRefused(#"{"limits": {"maxUserInfoBytes": 0}}"#, key: "limits.maxUserInfoBytes")
        expectRefused(#"{"limits": {"maxUserInfoBytes": -5}}"#, key: "limits.maxUserInfoBytes")
        expectRefused(#"{"limits": {"maxUserInfoBytes": 16777217}}"#, key: "limits.maxUserInfoBytes")
    }

    @Test("faults.payloadDelayMs negative is refused")
    func negativePayloadDelay() {
        expectRefused(#"{"faults": {"payloadDelayMs": -1}}"#, key: "faults.payloadDelayMs")
    }

    @Test("logLevel that is not a level is refused, listing the levels")
    func badLogLevel() {
        expectRefused(#"{"logLevel": "loud"}"#, key: "logLevel", mentioning: ["trace", "critical"])
    }

    @Test("every log level is accepted", arguments: ["trace", "debug", "info", "notice", "warning", "error", "critical"])
    func everyLogLevel(level: String) throws {
        #expect(try parse(#"{"logLevel": "\#(level)"}"#).logLevel == level)
    }

    @Test("an empty urlOpener is refused")
    func emptyURLOpener() {
        expectRefused(#"{"urlOpener": []}"#, key: "urlOpener")
    }

    @Test("a serviceType that is not _x._tcp is refused")
    func badServiceType() {
        expectRefused(#"{"serviceType": "handoff"}"#, key: "serviceType")
    }

    @Test("an empty name and a too long socket path are refused")
    func badNameAndSocket() {
        expectRefused(#"{"name": ""}"#, key: "name")
        expectRefused(#"{"name": "\#(String(repeating: "n", count: 64))"}"#, key: "name")
        expectRefused(#"{"socketPath": "/tmp/\#(String(repeating: "s", count: 120))"}"#, key: "socketPath")
    }

    // MARK: Refused: not JSON

    @Test("invalid JSON is refused, naming the file")
    func invalidJSON() {
        for text in [#"{"port": "#, "", "{port: 1}", #"{"port": 1,}"#] {
            guard let error = refusal(text) else { continue }
            #expect(error.key == "")
            #expect(error.description.contains(Self.source), "\(error.description)")
            #expect(error.description.contains("JSON"))
        }
    }

    @Test("a JSON document that is not an object is refused")
    func notAnObject() {
        guard let error = refusal("[1, 2]") else { return }
        #expect(error.description.contains(Self.source))
    }
}

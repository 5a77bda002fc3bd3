// Fuzzes handoffd's configuration reader: bytes → ConfigurationFile.parse → AgentConfiguration, or
// a ConfigurationError naming the key. The file is trusted more than the network, but a typo must
// be refused with a message, never crash the agent.
//
// Invariants when parsing succeeds: every value is in the range the README documents (so nothing
// out of range slips past validation). When it fails: the error has a message.

import FuzzSupport
import HandoffConfiguration
import HandoffCore

private let target = "FuzzConfigParser"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let configuration: AgentConfiguration
    do {
        configuration = try ConfigurationFile.parse(input, source: "fuzz.json", defaultName: "fuzzhost",
                                                    defaultSocketPath: "/run/user/1000/handoff/handoffd.sock")
    } catch {
        require(!error.description.isEmpty, target, "empty error message")
        return 0
    }
    let c = configuration
    require(!c.name.isEmpty && c.name.utf8.count <= 63, target, "name \(c.name.debugDescription) accepted")
    require((0...65535).contains(c.port), target, "port \(c.port) accepted")
    require(!c.socketPath.isEmpty && c.socketPath.utf8.count < 100, target, "socketPath \(c.socketPath.debugDescription) accepted")
    require(c.serviceType.hasPrefix("_") && c.serviceType.hasSuffix("._tcp"), target, "serviceType \(c.serviceType.debugDescription) accepted")
    require((1...(16 * 1024 * 1024)).contains(c.limits.maxUserInfoBytes), target, "maxUserInfoBytes \(c.limits.maxUserInfoBytes) accepted")
    for (key, duration) in [("connectTimeout", c.limits.connectTimeout), ("fetchTimeout", c.limits.fetchTimeout),
                            ("handlerTimeout", c.limits.handlerTimeout)] {
        require(duration >= .milliseconds(1) && duration <= .seconds(3600), target, "limits.\(key) \(duration) accepted")
    }
    require(c.faults.payloadDelay >= .zero, target, "faults.payloadDelayMs \(c.faults.payloadDelay) accepted")
    require(!c.urlOpener.isEmpty && !c.urlOpener[0].isEmpty, target, "urlOpener \(c.urlOpener) accepted")
    require(["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(c.logLevel), target, "logLevel \(c.logLevel.debugDescription) accepted")
    for (i, handler) in c.handlers.enumerated() {
        require(!handler.command.isEmpty && !handler.command[0].isEmpty, target, "handlers[\(i)].command \(handler.command) accepted")
        require(!handler.activityTypes.isEmpty, target, "handlers[\(i)].activityTypes empty but accepted")
        for type in handler.activityTypes where type != "*" {
            require(ActivityType(rawValue: type) != nil, target, "handlers[\(i)].activityTypes: invalid type \(type.debugDescription) accepted")
        }
    }
    return 0
}

import Configuration
import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads handoffd's JSON configuration file into a swift-configuration `ConfigReader`.
///
/// swift-configuration's JSON snapshot cannot hold arrays of objects (`handlers`), so the file is
/// parsed here, every key is checked against ``schema`` (an unknown key or a wrong type is refused
/// with the key's name), and the values are served by an `InMemoryProvider`; `handlers[i]` become
/// the keys `handlers.i.activityTypes` and `handlers.i.command`. Keys that start with `//` are
/// comments and are ignored, at any level.
public enum ConfigurationFile {
    enum ValueType: Equatable {
        case string, int, seconds, stringArray, bool
        var description: String {
            switch self {
            case .string: "a string"
            case .int: "an integer"
            case .seconds: "a number of seconds"
            case .stringArray: "an array of strings"
            case .bool: "true or false"
            }
        }
    }

    /// Every key a configuration file may hold.
    static let schema: [String: ValueType] = [
        "name": .string, "port": .int, "listenAddress": .string, "socketPath": .string, "serviceType": .string,
        "limits.maxUserInfoBytes": .int, "limits.connectTimeout": .seconds, "limits.fetchTimeout": .seconds,
        "limits.handlerTimeout": .seconds, "limits.maxOpenFileBytes": .int, "limits.maxInboxBytesPerDevice": .int, "urlOpener": .stringArray, "logLevel": .string,
        "inboxDirectory": .string, "appsDirectory": .string,
        "faults.payloadDelayMs": .int, "faults.dropAfterBytes": .int, "faults.stallStreamAfterBytes": .int,
        "faults.corruptFrame": .bool, "faults.refuseConnections": .bool, "faults.willSaveDelayMs": .int,
        "faults.advertiseGoneData": .bool, "limits.streamIdleTimeout": .seconds, "stateDirectory": .string,
        "security.handshakeTimeout": .seconds, "security.pairingTimeout": .seconds, "security.maxUnauthenticatedConnections": .int,
        "security.maxUnauthenticatedPerAddress": .int, "security.connectionsPerSecondPerAddress": .int, "security.maxConnectionsPerDevice": .int,
        "security.urlSchemes": .stringArray,
        "liveness.interval": .seconds, "liveness.timeout": .seconds, "notifications": .bool,
        "wideArea.domain": .string, "wideArea.server": .string, "wideArea.tsigKeyName": .string, "wideArea.tsigAlgorithm": .string,
        "wideArea.tsigSecret": .string,
        "receive.enabled": .bool, "receive.directory": .string, "receive.maxBytes": .int,
    ].merging(ClipboardConfiguration.schema) { $1 }
    static let handlerSchema: [String: ValueType] = ["activityTypes": .stringArray, "command": .stringArray, "streams": .bool]

    /// Loads and checks a configuration file.
    public static func load(path: String, defaultName: String, defaultSocketPath: String) throws(ConfigurationError) -> AgentConfiguration {
        let bytes: [UInt8]
        do { bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path))) } catch {
            throw ConfigurationError(key: "", "cannot read config file \(path): \(fileErrorDescription(error))")
        }
        return try parse(bytes, source: path, defaultName: defaultName, defaultSocketPath: defaultSocketPath)
    }

    /// Checks configuration JSON and reads it.
    public static func parse(_ bytes: [UInt8], source: String, defaultName: String, defaultSocketPath: String) throws(ConfigurationError) -> AgentConfiguration {
        let json: JSONValue
        do { json = try JSONValue(parsing: bytes) } catch { throw ConfigurationError(key: "", "\(source) is not valid JSON: \(error)") }
        guard case .object(let root) = json else { throw ConfigurationError(key: "", "\(source) must hold a JSON object") }
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        try flatten(root, prefix: "", into: &values)
        // A relative appsDirectory is relative to the configuration file; an empty one means none
        // (config/handoffd.json's default), not the file's own directory.
        if case .string(let apps)? = root["appsDirectory"], !apps.isEmpty, !apps.hasPrefix("/"), source.hasPrefix("/") || source.contains("/") {
            let base = URL(fileURLWithPath: source).deletingLastPathComponent().path
            values[AbsoluteConfigKey(["appsDirectory"])] = ConfigValue(.string(base + "/" + apps), isSecret: false)
        }
        let reader = ConfigReader(provider: InMemoryProvider(name: source, values: values))
        return try AgentConfiguration(reader: reader, defaultName: defaultName, defaultSocketPath: defaultSocketPath)
    }

    private static func flatten(_ object: [String: JSONValue], prefix: String, into values: inout [AbsoluteConfigKey: ConfigValue]) throws(ConfigurationError) {
        for (name, value) in object where !name.hasPrefix("//") {
            let key = prefix + name
            if key == "handlers" {
                guard case .array(let handlers) = value else { throw ConfigurationError(key: key, "must be an array of {\"activityTypes\": [...], \"command\": [...]}") }
                for (i, handler) in handlers.enumerated() {
                    guard case .object(let fields) = handler else { throw ConfigurationError(key: "handlers[\(i)]", "must be an object") }
                    guard fields["command"] != nil else { throw ConfigurationError(key: "handlers[\(i)].command", "is missing") }
                    for (field, fieldValue) in fields where !field.hasPrefix("//") {
                        guard let type = handlerSchema[field] else {
                            throw ConfigurationError(key: "handlers[\(i)].\(field)", "is not a known key; a handler has activityTypes, command and streams")
                        }
                        values[AbsoluteConfigKey(["handlers", "\(i)", field])] = try convert(fieldValue, type, key: "handlers[\(i)].\(field)")
                    }
                }
                continue
            }
            if case .object(let inner) = value, schema.keys.contains(where: { $0.hasPrefix(key + ".") }) {
                try flatten(inner, prefix: key + ".", into: &values)
                continue
            }
            guard let type = schema[key] else {
                let known = (schema.keys + ["handlers"]).filter { !$0.contains(".") || $0.hasPrefix(prefix) }.sorted()
                throw ConfigurationError(key: key, "is not a known key (known here: \(known.joined(separator: ", ")))")
            }
            values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = try convert(value, type, key: key)
        }
    }

    private static func convert(_ value: JSONValue, _ type: ValueType, key: String) throws(ConfigurationError) -> ConfigValue {
        let wrong = ConfigurationError(key: key, "must be \(type.description), got \(value.typeName)")
        switch type {
        case .string:
            guard let s = value.stringValue else { throw wrong }
            return ConfigValue(.string(s), isSecret: false)
        case .int:
            guard value.isIntegerNumber, let i = value.int64Value, let int = Int(exactly: i) else { throw wrong }
            return ConfigValue(.int(int), isSecret: false)
        case .seconds:
            guard let d = value.doubleValue else { throw wrong }
            return ConfigValue(.double(d), isSecret: false)
        case .bool:
            guard let b = value.boolValue else { throw wrong }
            return ConfigValue(.bool(b), isSecret: false)
        case .stringArray:
            guard let elements = value.arrayValue else { throw wrong }
            var strings: [String] = []
            for element in elements {
                guard let s = element.stringValue else { throw wrong }
                strings.append(s)
            }
            return ConfigValue(.stringArray(strings), isSecret: false)
        }
    }
}

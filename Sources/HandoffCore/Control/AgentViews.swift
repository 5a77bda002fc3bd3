#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A control response's result as a typed value: what the agent builds, and what the CLI and
/// apps print or read. The JSON forms are the wire (docs/PROTOCOL.md); they are written and read
/// here only.
public protocol ControlResult: Sendable {
    /// The wire form.
    var json: JSONValue { get }
    /// Reads the wire form; a field that is missing or of the wrong type gets its empty value,
    /// so that a client prints what it can of an answer from another version.
    init(json: JSONValue)
}

extension Array: ControlResult where Element: ControlResult {
    public var json: JSONValue { .array(map(\.json)) }
    public init(json: JSONValue) { self = (json.arrayValue ?? []).map(Element.init(json:)) }
}

extension JSONValue {
    /// A string member, or "?".
    func text(_ key: String) -> String { self[key]?.stringValue ?? "?" }
    /// An optional string member.
    func optionalText(_ key: String) -> String? { self[key]?.stringValue }
    /// An integer member, or 0.
    func number(_ key: String) -> Int { self[key]?.int64Value.map(Int.init) ?? 0 }
    /// An unsigned 64-bit member (a sequence number), or 0.
    func unsigned(_ key: String) -> UInt64 {
        if case .number(let text)? = self[key] { return UInt64(text) ?? 0 }
        return 0
    }
    /// A UUID member, or nil.
    func uuid(_ key: String) -> UUID? { self[key]?.stringValue.flatMap(UUID.init(uuidString:)) }
}

extension Optional where Wrapped == String {
    /// The JSON form: a string, or null.
    var json: JSONValue { map { .string($0) } ?? .null }
}

/// `status`: the local agent.
public struct AgentStatus: ControlResult, Equatable {
    /// An activity this agent holds.
    public struct Held: ControlResult, Equatable {
        public var id: UUID
        public var activityType: String
        public var title: String?
        public var expired: Bool

        public init(id: UUID, activityType: String, title: String?, expired: Bool) {
            (self.id, self.activityType, self.title, self.expired) = (id, activityType, title, expired)
        }

        public var json: JSONValue {
            .object(["id": .string(id.uuidString), "activityType": .string(activityType), "title": title.json, "expired": .bool(expired)])
        }

        public init(json: JSONValue) {
            self.init(id: json.uuid("id") ?? UUID.random(), activityType: json.text("activityType"), title: json.optionalText("title"),
                      expired: json["expired"]?.boolValue ?? false)
        }
    }

    public var name: String
    public var deviceID: String
    /// The DNS-SD instance name the agent registered under, once registered.
    public var registeredName: String?
    public var pairedDevices: Int
    /// Whether `handoff pair --accept` is waiting.
    public var pairing: Bool
    public var agentID: String
    public var port: Int
    public var serviceType: String
    public var socketPath: String
    /// The highest peer protocol version spoken.
    public var protocolVersion: Int
    /// The control protocol's version (``ControlProtocol/version``).
    public var controlProtocolVersion: Int
    public var sequence: UInt64
    /// The current activity's ID.
    public var current: UUID?
    public var activities: [Held]
    /// How many peers are known.
    public var peers: Int
    public var apps: [AppManifest]
    /// Relayed continuation-stream pairs open now.
    public var streamPairs: Int
    /// Whether handoff is paused here (`handoff pause`).
    public var paused: Bool

    public init(name: String, deviceID: String, registeredName: String?, pairedDevices: Int, pairing: Bool, agentID: String, port: Int,
                serviceType: String, socketPath: String, protocolVersion: Int, controlProtocolVersion: Int = ControlProtocol.version,
                sequence: UInt64, current: UUID?, activities: [Held], peers: Int, apps: [AppManifest], streamPairs: Int, paused: Bool = false) {
        self.name = name
        self.deviceID = deviceID
        self.registeredName = registeredName
        self.pairedDevices = pairedDevices
        self.pairing = pairing
        self.agentID = agentID
        self.port = port
        self.serviceType = serviceType
        self.socketPath = socketPath
        self.protocolVersion = protocolVersion
        self.controlProtocolVersion = controlProtocolVersion
        self.sequence = sequence
        self.current = current
        self.activities = activities
        self.peers = peers
        self.apps = apps
        self.streamPairs = streamPairs
        self.paused = paused
    }

    public var json: JSONValue {
        .object([
            "name": .string(name), "deviceID": .string(deviceID), "registeredName": registeredName.json,
            "pairedDevices": .integer(Int64(pairedDevices)), "pairing": .bool(pairing), "agentID": .string(agentID),
            "port": .integer(Int64(port)), "serviceType": .string(serviceType), "socketPath": .string(socketPath),
            "protocolVersion": .integer(Int64(protocolVersion)), "controlProtocolVersion": .integer(Int64(controlProtocolVersion)),
            "sequence": .integer(sequence), "current": current.map { .string($0.uuidString) } ?? .null, "activities": activities.json,
            "peers": .integer(Int64(peers)), "apps": .array(apps.map(\.json)), "streamPairs": .integer(Int64(streamPairs)),
            "paused": .bool(paused),
        ])
    }

    public init(json: JSONValue) {
        self.init(name: json.text("name"), deviceID: json.text("deviceID"), registeredName: json.optionalText("registeredName"),
                  pairedDevices: json.number("pairedDevices"), pairing: json["pairing"]?.boolValue ?? false, agentID: json.text("agentID"),
                  port: json.number("port"), serviceType: json.text("serviceType"), socketPath: json.text("socketPath"),
                  protocolVersion: json.number("protocolVersion"), controlProtocolVersion: json.number("controlProtocolVersion"),
                  sequence: json.unsigned("sequence"), current: json.uuid("current"), activities: [Held](json: json["activities"] ?? .null),
                  peers: json.number("peers"), apps: (json["apps"]?.arrayValue ?? []).compactMap { try? AppManifest(json: $0) },
                  streamPairs: json.number("streamPairs"), paused: json["paused"]?.boolValue ?? false)
    }
}

/// `peers`: one agent discovered.
public struct PeerSummary: ControlResult, Equatable {
    public var name: String
    /// Its device ID, once its advertisement was read.
    public var deviceID: String?
    public var instanceName: String
    public var agentID: String
    public var host: String
    public var addresses: [String]
    public var port: Int
    public var sequence: UInt64
    /// The activity it offers now.
    public var current: UUID?
    /// Whether liveness reaches it.
    public var reachable: Bool
    /// How it is known: `dns-sd` (browsed) or `address` (reached at a stored address).
    public var via: String

    public init(name: String, deviceID: String?, instanceName: String, agentID: String, host: String, addresses: [String], port: Int,
                sequence: UInt64, current: UUID?, reachable: Bool, via: String = "dns-sd") {
        (self.name, self.deviceID, self.instanceName, self.agentID, self.host) = (name, deviceID, instanceName, agentID, host)
        (self.addresses, self.port, self.sequence, self.current, self.reachable, self.via) = (addresses, port, sequence, current, reachable, via)
    }

    public var json: JSONValue {
        .object([
            "name": .string(name), "deviceID": deviceID.json, "instanceName": .string(instanceName), "agentID": .string(agentID),
            "host": .string(host), "addresses": .array(addresses.map { .string($0) }), "port": .integer(Int64(port)),
            "sequence": .integer(sequence), "current": current.map { .string($0.uuidString) } ?? .null, "reachable": .bool(reachable),
            "via": .string(via),
        ])
    }

    public init(json: JSONValue) {
        self.init(name: json.text("name"), deviceID: json.optionalText("deviceID"), instanceName: json.text("instanceName"),
                  agentID: json.text("agentID"), host: json.text("host"),
                  addresses: (json["addresses"]?.arrayValue ?? []).compactMap(\.stringValue), port: json.number("port"),
                  sequence: json.unsigned("sequence"), current: json.uuid("current"), reachable: json["reachable"]?.boolValue ?? true,
                  via: json.optionalText("via") ?? "dns-sd")
    }
}

/// `list`: one activity a paired peer offers.
public struct OfferedActivity: ControlResult, Equatable {
    public var id: UUID
    public var peer: String
    public var activityType: String
    public var title: String?
    /// When this agent first saw the activity on offer (nil from an agent before this field).
    public var offeredAt: Date?

    public init(id: UUID, peer: String, activityType: String, title: String?, offeredAt: Date? = nil) {
        (self.id, self.peer, self.activityType, self.title, self.offeredAt) = (id, peer, activityType, title, offeredAt)
    }

    public var json: JSONValue {
        var body: [String: JSONValue] = ["id": .string(id.uuidString), "peer": .string(peer), "activityType": .string(activityType), "title": title.json]
        if let offeredAt { body["offeredAt"] = .string(AgentEvent.timeText(offeredAt)) }
        return .object(body)
    }

    public init(json: JSONValue) {
        self.init(id: json.uuid("id") ?? UUID.random(), peer: json.text("peer"), activityType: json.text("activityType"), title: json.optionalText("title"),
                  offeredAt: json.optionalText("offeredAt").flatMap(AgentEvent.parseTime))
    }
}

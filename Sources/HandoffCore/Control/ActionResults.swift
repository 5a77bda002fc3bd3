#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `continue`: who took the activity.
public struct ContinueResult: ControlResult, Equatable {
    /// True: a handler, an app or the URL opener took it (a failure is an error instead).
    public var handled: Bool
    /// The peer it came from, by the name this host stored when pairing.
    public var peer: String
    public var continuationID: UUID?
    /// The activity as fetched.
    public var activity: JSONValue
    /// What took it: `app`, `handler`, `streamingHandler` or `urlOpener`.
    public var by: String
    /// The app's bundle ID, when an app took it.
    public var app: String?
    /// The command that ran, when a handler or the URL opener took it.
    public var command: [String]?
    /// A retry with the same idempotency key: answered from the first attempt, nothing ran again.
    public var replayed: Bool

    public init(handled: Bool = true, peer: String, continuationID: UUID?, activity: JSONValue, by: String, app: String? = nil,
                command: [String]? = nil, replayed: Bool = false) {
        (self.handled, self.peer, self.continuationID, self.activity, self.by) = (handled, peer, continuationID, activity, by)
        (self.app, self.command, self.replayed) = (app, command, replayed)
    }

    public var json: JSONValue {
        var body: [String: JSONValue] = [
            "handled": .bool(handled), "peer": .string(peer), "activity": activity, "by": .string(by),
        ]
        if let continuationID { body["continuationID"] = .string(continuationID.uuidString) }
        if let app { body["app"] = .string(app) }
        if let command { body["command"] = .array(command.map { .string($0) }) }
        if replayed { body["replayed"] = .bool(true) }
        return .object(body)
    }

    public init(json: JSONValue) {
        self.init(handled: json["handled"]?.boolValue ?? false, peer: json.text("peer"), continuationID: json.uuid("continuationID"),
                  activity: json["activity"] ?? .null, by: json.text("by"), app: json.optionalText("app"),
                  command: json["command"]?.arrayValue?.compactMap(\.stringValue), replayed: json["replayed"]?.boolValue ?? false)
    }

    /// The fetched activity's type, as the CLI prints it.
    public var activityType: String { activity["activityType"]?.stringValue ?? "activity" }
}

/// `open`: whether the app on the peer handled what was sent.
public struct OpenResult: ControlResult, Equatable {
    public var handled: Bool
    public var peer: String
    public var app: String

    public init(handled: Bool, peer: String, app: String) { (self.handled, self.peer, self.app) = (handled, peer, app) }

    public var json: JSONValue { .object(["handled": .bool(handled), "peer": .string(peer), "app": .string(app)]) }

    public init(json: JSONValue) { self.init(handled: json["handled"]?.boolValue ?? false, peer: json.text("peer"), app: json.text("app")) }
}

/// `trustAdd` and `pair`: the device now paired; `trustRemove` also says how many of its
/// connections were closed.
public struct TrustChange: ControlResult, Equatable {
    public var deviceID: String
    public var name: String
    /// `trustRemove` only.
    public var closedConnections: Int?

    public init(deviceID: String, name: String, closedConnections: Int? = nil) {
        (self.deviceID, self.name, self.closedConnections) = (deviceID, name, closedConnections)
    }

    public var json: JSONValue {
        var body: [String: JSONValue] = ["deviceID": .string(deviceID), "name": .string(name)]
        if let closedConnections { body["closedConnections"] = .integer(Int64(closedConnections)) }
        return .object(body)
    }

    public init(json: JSONValue) {
        self.init(deviceID: json.text("deviceID"), name: json.text("name"), closedConnections: json["closedConnections"]?.int64Value.map(Int.init))
    }
}

/// `trustList`: one paired device.
public struct TrustedDevice: ControlResult, Equatable {
    public var deviceID: String
    public var name: String
    /// When it was paired, ISO 8601.
    public var pairedAt: String
    /// Whether its advertising key is known (else its records cannot be read yet).
    public var advertisingKeyKnown: Bool
    /// Whether it is discovered now.
    public var online: Bool
    /// Where it can be reached without DNS-SD (``PeerAddress``, written form).
    public var addresses: [String]

    public init(deviceID: String, name: String, pairedAt: String, advertisingKeyKnown: Bool, online: Bool, addresses: [String] = []) {
        (self.deviceID, self.name, self.pairedAt, self.advertisingKeyKnown, self.online) = (deviceID, name, pairedAt, advertisingKeyKnown, online)
        self.addresses = addresses
    }

    public var json: JSONValue {
        .object([
            "deviceID": .string(deviceID), "name": .string(name), "pairedAt": .string(pairedAt),
            "advertisingKeyKnown": .bool(advertisingKeyKnown), "online": .bool(online), "addresses": .array(addresses.map { .string($0) }),
        ])
    }

    public init(json: JSONValue) {
        self.init(deviceID: json.text("deviceID"), name: json.text("name"), pairedAt: json.text("pairedAt"),
                  advertisingKeyKnown: json["advertisingKeyKnown"]?.boolValue ?? false, online: json["online"]?.boolValue ?? false,
                  addresses: json["addresses"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }
}

/// `pairable`: a device accepting pairing now.
public struct PairableDevice: ControlResult, Equatable {
    /// The name it shows while it accepts (its own words).
    public var name: String
    /// HOST:PORT.
    public var address: String

    public init(name: String, address: String) { (self.name, self.address) = (name, address) }

    public var json: JSONValue { .object(["name": .string(name), "address": .string(address)]) }

    public init(json: JSONValue) { self.init(name: json.text("name"), address: json.text("address")) }
}

/// `faults`: the fault plan (docs/FAULTS.md).
public struct FaultsReport: ControlResult, Equatable {
    /// One fault: its value (nil: off), the code a peer sees, and what it does.
    public struct Entry: ControlResult, Equatable {
        public var name: String
        public var value: String?
        public var code: Int
        public var summary: String

        public init(name: String, value: String?, code: Int, summary: String) {
            (self.name, self.value, self.code, self.summary) = (name, value, code, summary)
        }

        public var json: JSONValue {
            .object(["name": .string(name), "value": value.json, "code": .integer(Int64(code)), "summary": .string(summary)])
        }

        public init(json: JSONValue) {
            self.init(name: json.text("name"), value: json.optionalText("value"), code: json.number("code"), summary: json.text("summary"))
        }
    }

    /// The active faults, as the configuration's `faults` section spells them.
    public var active: JSONValue
    public var faults: [Entry]

    public init(active: JSONValue, faults: [Entry]) { (self.active, self.faults) = (active, faults) }

    public var json: JSONValue { .object(["active": active, "faults": faults.json]) }

    public init(json: JSONValue) { self.init(active: json["active"] ?? .object([:]), faults: [Entry](json: json["faults"] ?? .null)) }
}

/// What the agent sees of the network, for `handoff doctor` (the `diagnose` control request):
/// avahi-daemon's state on the system bus, whether its own service shows up in its browse, and
/// what it knows of each paired device. Observations only; ``DoctorVerdicts`` judges them.
public struct AgentDiagnosis: ControlResult, Equatable {
    /// avahi-daemon as the agent found it on the system bus.
    public enum AvahiState: Sendable, Equatable {
        /// `org.freedesktop.Avahi.Server.GetState` answered RUNNING (2).
        case running
        /// It answered another state (0 invalid, 1 registering, 3 collision, 4 failure).
        case state(Int)
        /// It did not answer: the reason (no system bus, avahi-daemon not on it …).
        case unavailable(String)
    }

    /// How a pinned TLS connection to a paired device went (hello, then ping).
    public enum ProbeOutcome: Sendable, Equatable {
        /// It answered hello and ping: TLS and pairing accepted.
        case accepted
        /// It could not be reached at all (refused, timed out, no route): the reason.
        case unreachable(String)
        /// An agent answered but refused TLS or the pairing (wrong certificate, no pong): the reason.
        case refused(String)
        /// No address to try: it was not seen over DNS-SD and has no stored address.
        case notTried
    }

    /// A paired device as the agent knows it.
    public struct Device: Sendable, Equatable {
        public var name: String
        public var deviceID: String
        /// Whether a verified record of it is in the agent's DNS-SD directory.
        public var seenOverDNSSD: Bool
        /// Whether, not seen over DNS-SD, it is known by its stored address: liveness reached it
        /// there and it sent its advertisement (`peers` says `via address`).
        public var reachedByAddress: Bool
        /// Whether, reached by address, that address is one of its stored ones (`trust add
        /// --address`). False when it is reached where it connected from and said it is back
        /// (its announce), which can be elsewhere than the addresses stored for it.
        public var atStoredAddress: Bool
        /// The addresses and port DNS-SD gave for it, or the stored address it was reached at
        /// (empty when neither).
        public var addresses: [String]
        public var port: Int?
        /// Liveness's view: false once its pinned connection stopped answering.
        public var reachable: Bool
        public var probe: ProbeOutcome
        /// How far its newest sealed advertisement's timestamp is ahead of this host's clock, in
        /// milliseconds (negative: behind; nil: none seen).
        public var clockAheadMilliseconds: Int64?

        public init(name: String, deviceID: String, seenOverDNSSD: Bool, reachedByAddress: Bool = false, atStoredAddress: Bool = true, addresses: [String],
                    port: Int?, reachable: Bool, probe: ProbeOutcome, clockAheadMilliseconds: Int64?) {
            self.name = name
            self.deviceID = deviceID
            self.seenOverDNSSD = seenOverDNSSD
            self.reachedByAddress = reachedByAddress
            self.atStoredAddress = atStoredAddress
            self.addresses = addresses
            self.port = port
            self.reachable = reachable
            self.probe = probe
            self.clockAheadMilliseconds = clockAheadMilliseconds
        }
    }

    public var avahi: AvahiState
    /// The instance name the agent registered (nil: no registration yet).
    public var registeredName: String?
    /// Whether the agent's own browse shows its own record now.
    public var ownServiceVisible: Bool
    /// The agent's peer port.
    public var port: Int
    public var devices: [Device]

    public init(avahi: AvahiState, registeredName: String?, ownServiceVisible: Bool, port: Int, devices: [Device]) {
        self.avahi = avahi
        self.registeredName = registeredName
        self.ownServiceVisible = ownServiceVisible
        self.port = port
        self.devices = devices
    }

    public var json: JSONValue {
        let avahiJSON: JSONValue = switch avahi {
        case .running: .object(["state": .integer(2)])
        case .state(let state): .object(["state": .integer(state)])
        case .unavailable(let reason): .object(["error": .string(reason)])
        }
        return .object([
            "avahi": avahiJSON, "registeredName": registeredName.map(JSONValue.string) ?? .null,
            "ownServiceVisible": .bool(ownServiceVisible), "port": .integer(port),
            "devices": .array(devices.map { device in
                let probe: JSONValue = switch device.probe {
                case .accepted: .object(["outcome": .string("accepted")])
                case .unreachable(let reason): .object(["outcome": .string("unreachable"), "reason": .string(reason)])
                case .refused(let reason): .object(["outcome": .string("refused"), "reason": .string(reason)])
                case .notTried: .object(["outcome": .string("notTried")])
                }
                return .object([
                    "name": .string(device.name), "deviceID": .string(device.deviceID), "seenOverDNSSD": .bool(device.seenOverDNSSD),
                    "reachedByAddress": .bool(device.reachedByAddress), "atStoredAddress": .bool(device.atStoredAddress),
                    "addresses": .array(device.addresses.map(JSONValue.string)), "port": device.port.map(JSONValue.integer) ?? .null,
                    "reachable": .bool(device.reachable), "probe": probe,
                    "clockAheadMilliseconds": device.clockAheadMilliseconds.map(JSONValue.integer) ?? .null,
                ])
            }),
        ])
    }

    public init(json: JSONValue) {
        let avahiJSON = json["avahi"]
        if let state = avahiJSON?["state"]?.int64Value {
            avahi = state == 2 ? .running : .state(Int(state))
        } else {
            avahi = .unavailable(avahiJSON?["error"]?.stringValue ?? "not reported")
        }
        registeredName = json["registeredName"]?.stringValue
        ownServiceVisible = json["ownServiceVisible"]?.boolValue ?? false
        port = json["port"]?.int64Value.map(Int.init) ?? 0
        devices = (json["devices"]?.arrayValue ?? []).map { device in
            let probeJSON = device["probe"]
            let reason = probeJSON?["reason"]?.stringValue ?? ""
            let probe: ProbeOutcome = switch probeJSON?["outcome"]?.stringValue {
            case "accepted": .accepted
            case "unreachable": .unreachable(reason)
            case "refused": .refused(reason)
            default: .notTried
            }
            return Device(name: device["name"]?.stringValue ?? "", deviceID: device["deviceID"]?.stringValue ?? "",
                          seenOverDNSSD: device["seenOverDNSSD"]?.boolValue ?? false,
                          reachedByAddress: device["reachedByAddress"]?.boolValue ?? false,
                          atStoredAddress: device["atStoredAddress"]?.boolValue ?? true,
                          addresses: (device["addresses"]?.arrayValue ?? []).compactMap(\.stringValue),
                          port: device["port"]?.int64Value.map(Int.init), reachable: device["reachable"]?.boolValue ?? false,
                          probe: probe, clockAheadMilliseconds: device["clockAheadMilliseconds"]?.int64Value)
        }
    }
}
